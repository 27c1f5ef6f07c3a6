/* maleelf: runs code from mapped, executable, malformed ELF files.
 *
 * usage: maleelf DIR
 * Writes three files into DIR, each an ELF header that lies followed by a
 * small loop at file offset 0x800 (spin 2^24 times, return), maps each one
 * PROT_READ|PROT_EXEC from offset 0, and spins in it from its own thread:
 *   bad_tables.elf  program and section header tables far past the end of
 *                   the file, 0xffff entries each, e_shstrndx out of range
 *   bad_notes.elf   a PT_NOTE whose build-id note claims a 4 GiB descriptor,
 *                   a PT_LOAD and a PT_DYNAMIC pointing at garbage
 *   bad_symtab.elf  section headers inside the file: a SHT_SYMTAB whose size
 *                   and offset run past the end, linked to itself as strtab
 * Prints "ready PID" once every thread runs. */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FILE_SIZE 0x1000
#define CODE_OFFSET 0x800

/* mov $0x1000000, %ecx; 1: dec %ecx; jnz 1b; ret */
static const unsigned char spin_code[] = { 0xb9, 0x00, 0x00, 0x00, 0x01, 0xff, 0xc9,
					   0x75, 0xfc, 0xc3 };

static void elf_header(unsigned char *buf)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_entry = CODE_OFFSET;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_shentsize = sizeof(Elf64_Shdr);
}

static void bad_tables(unsigned char *buf)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	eh->e_phoff = 0xffffffff00ull;
	eh->e_phnum = 0xffff;
	eh->e_shoff = 1ull << 60;
	eh->e_shnum = 0xffff;
	eh->e_shstrndx = 0xfffe;
}

static void bad_notes(unsigned char *buf)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	Elf64_Phdr *ph = (Elf64_Phdr *)(buf + sizeof *eh);
	eh->e_phoff = sizeof *eh;
	eh->e_phnum = 3;
	ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0,
			      .p_vaddr = 0x7fff00000000ull, .p_filesz = 0xffffffffffull,
			      .p_memsz = 0x10, .p_align = 3 };
	ph[1] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_offset = 0x200, .p_filesz = 0x40,
			      .p_align = 4 };
	ph[2] = (Elf64_Phdr){ .p_type = PT_DYNAMIC, .p_offset = 0x300, .p_filesz = 0x7fffffff,
			      .p_vaddr = 0x300 };
	Elf64_Nhdr *nh = (Elf64_Nhdr *)(buf + 0x200);
	nh->n_namesz = 4;
	nh->n_descsz = 0xfffffff0u;
	nh->n_type = NT_GNU_BUILD_ID;
	memcpy(buf + 0x200 + sizeof *nh, "GNU", 4);
	memset(buf + 0x300, 0xff, 0x100);   /* the "dynamic section" */
}

static void bad_symtab(unsigned char *buf)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	Elf64_Shdr *sh = (Elf64_Shdr *)(buf + 0x100);
	eh->e_shoff = 0x100;
	eh->e_shnum = 4;
	eh->e_shstrndx = 2;
	sh[1] = (Elf64_Shdr){ .sh_type = SHT_SYMTAB, .sh_offset = 0xf00,
			      .sh_size = 0xffffffffff00ull, .sh_link = 1,
			      .sh_entsize = sizeof(Elf64_Sym), .sh_info = 0x7fffffff };
	sh[2] = (Elf64_Shdr){ .sh_type = SHT_STRTAB, .sh_offset = 0xfff,
			      .sh_size = 0x100000 };
	sh[3] = (Elf64_Shdr){ .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			      .sh_addr = CODE_OFFSET, .sh_offset = CODE_OFFSET,
			      .sh_size = sizeof spin_code, .sh_name = 0xfffffff0u };
}

static void *spinner_main(void *arg)
{
	void (*spin)(void) = (void (*)(void))arg;
	for (;;)
		spin();
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*corrupt)(unsigned char *);
	} files[] = {
		{ "bad_tables.elf", bad_tables },
		{ "bad_notes.elf", bad_notes },
		{ "bad_symtab.elf", bad_symtab },
	};
	if (argc != 2) {
		fprintf(stderr, "usage: maleelf DIR\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		static unsigned char buf[FILE_SIZE];
		char path[4096];
		memset(buf, 0, sizeof buf);
		elf_header(buf);
		files[i].corrupt(buf);
		memcpy(buf + CODE_OFFSET, spin_code, sizeof spin_code);
		snprintf(path, sizeof path, "%s/%s", argv[1], files[i].name);
		int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0755);
		if (fd < 0 || write(fd, buf, sizeof buf) != (ssize_t)sizeof buf) {
			perror(path);
			return 1;
		}
		void *map = mmap(NULL, FILE_SIZE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		close(fd);
		pthread_t t;
		if (pthread_create(&t, NULL, spinner_main, (char *)map + CODE_OFFSET) != 0) {
			perror("pthread_create");
			return 1;
		}
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
