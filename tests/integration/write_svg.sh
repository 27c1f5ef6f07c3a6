#!/bin/sh
# write_svg: our own flame graph of mkprofile's known profile, parsed as XML
# (xmllint when present, python3's xml.etree always): the frames are exactly
# the tree of the folded stacks, each width proportional to its samples and
# inside its parent, the title, the script, hostile names escaped; each
# frame says where its function is (file:line in module) on hover, and a
# legend names the kinds of frame drawn (each its colors). A deep
# profile (5,000 distinct stacks of 66 frames: 264k frames at least 0.1 px
# wide, 80 MB of SVG before) keeps its widest frames within 5 MB, the file
# says how many it left out, and the frames drawn are whole (each in its
# parent).
. "$TESTS_SRCDIR/lib.sh"
need_cmd python3

"$PROGS/mkprofile" -t "$T/t.folded" "$T/t.svg" || fail "mkprofile failed"
"$PROGS/mkprofile" -T 'my <title> & "quotes"' "$T/p.folded" "$T/p.svg" || fail "mkprofile -T failed"
"$PROGS/mkprofile" -a -f svg "$T/a.out" || fail "mkprofile -f svg failed"
cmp -s "$T/p.svg" "$T/a.out" && fail "the title option changed nothing"
mv "$T/a.out" "$T/a.svg"

for f in t p a; do
	xmllint --noout "$T/$f.svg" 2>"$T/xmllint.err" ||
		fail "$f.svg is not well-formed: $(head -3 "$T/xmllint.err")"
done
LC_ALL=C grep -q "$(printf '[\001-\010\013\014\016-\037]')" "$T/t.svg" &&
	fail "control characters in the SVG"

check() {
	python3 - "$@" <<'PY' || fail "SVG check failed for $1"
import sys, xml.etree.ElementTree as ET
svg_path, folded_path, want_title = sys.argv[1:4]
NS = '{http://www.w3.org/2000/svg}'
root = ET.parse(svg_path).getroot()
def die(msg):
    print('FAIL:', msg); sys.exit(1)
if root.tag != NS + 'svg':
    die('root element is %s' % root.tag)
if not any(e.tag == NS + 'script' and 'zoom' in (e.text or '') for e in root):
    die('no script with zoom')
title = root.find(NS + 'text[@id="title"]')
if title is None or title.text != want_title:
    die('title %r, expected %r' % (title is not None and title.text, want_title))
for ident in ('search', 'reset', 'details', 'matched'):
    if root.find('.//' + NS + 'text[@id="%s"]' % ident) is None:
        die('no %s element' % ident)

# the expected tree from the folded file: (depth, path) -> samples
want, total = {}, 0
for line in open(folded_path, encoding='utf-8'):
    stack, count = line.rstrip('\n').rsplit(' ', 1)
    count = int(count); total += count
    frames = stack.split(';')
    for d in range(len(frames)):
        key = tuple(frames[:d + 1])
        want[key] = want.get(key, 0) + count
want[()] = total

width = float(root.get('width'))
span = width - 2 * float(root.get('data-pad'))
got, nodes = {}, []
for g in root.iter(NS + 'g'):
    if g.get('class') != 'f':
        continue
    rect, text, ttl = g.find(NS + 'rect'), g.find(NS + 'text'), g.find(NS + 'title')
    name, n, d, s = g.get('data-name'), int(g.get('data-n')), int(g.get('data-d')), int(g.get('data-s'))
    x, w = float(rect.get('x')), float(rect.get('width'))
    pct = '%.2f%%' % (100.0 * n / total)
    where = g.get('data-where')
    if ttl.text != '%s (%d samples, %s)%s' % (name, n, pct, ' \u2014 ' + where if where else ''):
        die('title %r of frame %r' % (ttl.text, name))
    if abs(w - n * span / total) > 0.01:
        die('frame %s: width %.2f for %d of %d samples' % (name, w, n, total))
    if abs(x - (float(root.get('data-pad')) + s * span / total)) > 0.01:
        die('frame %s: x %.2f for start %d' % (name, x, s))
    label = text.text or ''
    if label and not (label == name or (label.endswith('..') and name.startswith(label[:-2]))):
        die('label %r of %r' % (label, name))
    nodes.append((d, s, n, name))
# rebuild each frame's path from the intervals: the parent is the frame one
# level down whose interval contains it
nodes.sort()
paths = {}
for d, s, n, name in nodes:
    if d == 0:
        if name != 'all' or n != total or s != 0:
            die('root frame %r %d %d' % (name, s, n))
        paths[(d, s, n, name)] = ()
        continue
    parents = [k for k in paths if k[0] == d - 1 and k[1] <= s and s + n <= k[1] + k[2]]
    if len(parents) != 1:
        die('frame %s at depth %d has %d parents' % (name, d, len(parents)))
    paths[(d, s, n, name)] = paths[parents[0]] + (name,)
for k, path in paths.items():
    if got.get(path) is not None:
        die('frame %r drawn twice' % (path,))
    got[path] = k[2]
if got != want:
    missing = set(want.items()) ^ set(got.items())
    die('frames differ from the folded stacks: %r' % sorted(missing)[:6])
print('# %s: %d frames, widths proportional to %d samples' % (svg_path.rsplit('/', 1)[-1], len(got), total))
PY
}
check "$T/t.svg" "$T/t.folded" 'csampler: ./app --mode="fast" <in>&out (pid 4242), 1.50s, 125 samples'
grep -q 'id="cut"' "$T/t.svg" && fail "frames left out of a small profile"
# the hover: where each function is (its file and first line, its module)
grep -q 'data-name="compute" data-where="app.c:38 in app"' "$T/t.svg" ||
	fail "compute's frame does not say where it is: $(grep -o 'data-name="compute"[^>]*' "$T/t.svg" | head -1)"
grep -q '<title>compute (50 samples, 40.00%) — app.c:38 in app</title>' "$T/t.svg" ||
	fail "compute's title: $(grep -o '<title>compute[^<]*' "$T/t.svg" | head -1)"
grep -q "details.textContent = f.name .*" "$T/t.svg" && grep -q "f.where ?" "$T/t.svg" ||
	fail "the hover line does not show where"
# colored by kind, with a legend of the kinds drawn
legend=$(grep -o '<g id="legend">.*</g>' "$T/t.svg" | sed 's/<rect[^>]*>//g; s/<[^>]*>/ /g' | tr -s ' ')
assert_eq "legend" "$legend" " native inlined JIT no symbol [truncated] thread "
grep -q '<g id="legend">' "$T/p.svg" || fail "no legend without the thread view"

"$PROGS/mkprofile" -W 5000 "$T/w.svg" || fail "mkprofile -W failed"
size=$(wc -c <"$T/w.svg")
note "deep profile: $size bytes, $(grep -c '<g class="f"' "$T/w.svg") frames drawn"
[ "$size" -le 5242880 ] || fail "deep profile's SVG is $size bytes (over 5 MB)"
grep -q '<text id="cut" [^>]*>[0-9]* frames of 1 samples or fewer ([0-9.]*%) not drawn' "$T/w.svg" ||
	fail "the SVG does not say which frames it left out"
python3 - "$T/w.svg" <<'PY' || fail "deep profile's SVG frames are not whole"
import sys, xml.etree.ElementTree as ET
NS = '{http://www.w3.org/2000/svg}'
frames = [(int(g.get('data-d')), int(g.get('data-s')), int(g.get('data-n')), g.get('data-name'))
          for g in ET.parse(sys.argv[1]).getroot().iter(NS + 'g') if g.get('class') == 'f']
byd = {}
for f in frames:
    byd.setdefault(f[0], []).append(f)
for d, s, n, name in frames:
    if d and not any(p[1] <= s and s + n <= p[1] + p[2] for p in byd.get(d - 1, [])):
        print('FAIL: frame %s at depth %d has no caller drawn' % (name, d)); sys.exit(1)
names = set(f[3] for f in frames)
for want in ('main', 'wide', 'compute', 'ns::deep::level_0_a(std::vector<int, std::allocator<int> > const&)'):
    if want not in names:
        print('FAIL: %s not drawn' % want); sys.exit(1)
PY
check "$T/p.svg" "$T/p.folded" 'my <title> & "quotes"'
grep -q 'data-name="a:b999 77-4245"' "$T/t.svg" || fail "hostile thread frame not escaped as in folded"
grep -q '>my &lt;title&gt; &amp; &quot;quotes&quot;</text>' "$T/p.svg" || fail "title not XML-escaped"
exit 0
