// Open a csampler flame graph SVG in headless Chromium and print what a
// user sees, one line each:
//   error MESSAGE                   each page or console error
//   frame NAME FILL WIDTH DETAILS   each frame named on the command line, the
//                                   first of its name: its color, its width in
//                                   pixels and the details line its mouse-over
//                                   shows ("_" for spaces)
//   zoom NAME WIDTH                 after a click on the first NAME: its width
//   zoomed OTHER WIDTH              ... and each other frame named's width then
// usage: node svgview.js FILE.svg NAME...
// Exits 2 when Chromium could not be started (the caller skips).
const path = require('path');
const { launch } = require('./browser');

const [, , file, ...names] = process.argv;

(async () => {
  const browser = await launch();
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('pageerror', (e) => console.log('error ' + String(e).split('\n')[0]));
  page.on('console', (m) => { if (m.type() === 'error') console.log('error ' + m.text()); });
  await page.goto('file://' + path.resolve(file));
  const seen = (name) => page.evaluate((n) => {
    const g = Array.from(document.querySelectorAll('g.f')).find((x) => x.getAttribute('data-name') === n);
    if (!g) return null;
    g.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
    const r = g.querySelector('rect');
    return { fill: r.getAttribute('fill'), width: r.getBoundingClientRect().width,
      details: document.getElementById('details').textContent };
  }, name);
  for (const n of names) {
    const s = await seen(n);
    if (s) console.log(`frame ${n} ${s.fill.replace(/ /g, '')} ${s.width.toFixed(1)} ${s.details.replace(/ /g, '_')}`);
  }
  if (names.length) {
    await page.evaluate((n) => {
      const g = Array.from(document.querySelectorAll('g.f')).find((x) => x.getAttribute('data-name') === n);
      if (g) g.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    }, names[0]);
    for (const [i, n] of names.entries()) {
      const s = await seen(n);
      if (s) console.log(`${i ? 'zoomed' : 'zoom'} ${n} ${s.width.toFixed(1)}`);
    }
  }
  await browser.close();
})();
