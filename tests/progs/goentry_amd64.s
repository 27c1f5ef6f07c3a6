// goentry's spinAtEntry: a self-loop at the function's first instruction
// (no frame, no stack check).
#include "textflag.h"

TEXT ·spinAtEntry(SB),NOSPLIT|NOFRAME,$0-0
loop:
	JMP	loop
