// Load a speedscope file in speedscope itself (its npm release), in headless
// Chromium, and print what the viewer shows:
//   title PROFILE-NAME (K/N)      the profile it opened
//   row NAME TOTAL_NS SELF_NS     each row of the Sandwich view's table
//   error MESSAGE                 each page error or console error
// usage: node view.js FILE [SCREENSHOT.png]
// Exits 2 when the viewer could not be started (the caller skips).
const http = require('http');
const fs = require('fs');
const path = require('path');

const { launch } = require('./browser');

const release = path.join(path.dirname(require.resolve('speedscope/package.json')), 'dist', 'release');
const [, , profile, shot] = process.argv;
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
  '.wasm': 'application/wasm', '.json': 'application/json' };

const server = http.createServer((req, res) => {
  const url = decodeURIComponent(req.url.split('?')[0]);
  const file = url === '/profile.json' ? profile
    : path.join(release, path.normalize(url === '/' ? '/index.html' : url));
  if (file !== profile && !file.startsWith(release + path.sep)) {
    res.writeHead(403);
    res.end();
    return;
  }
  fs.readFile(file, (err, data) => {
    if (err) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
    res.end(data);
  });
});

const units = { ns: 1, 'µs': 1e3, us: 1e3, ms: 1e6, s: 1e9, min: 60e9, h: 3600e9 };
function toNs(text) {
  const m = /([0-9.]+)\s*(ns|µs|us|ms|s|min|h)\b/.exec(text);
  return m ? Math.round(parseFloat(m[1]) * units[m[2]]) : NaN;
}

server.listen(0, '127.0.0.1', async () => {
  const base = `http://127.0.0.1:${server.address().port}`;
  const browser = await launch();
  const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
  page.on('pageerror', (e) => console.log('error ' + String(e).split('\n')[0]));
  page.on('console', (m) => { if (m.type() === 'error') console.log('error ' + m.text()); });
  await page.goto(`${base}/index.html#profileURL=${encodeURIComponent(base + '/profile.json')}`);
  await page.getByText('Sandwich').waitFor({ timeout: 20000 });
  // the toolbar's title appears once the profile is imported
  await page.waitForFunction(() => /\(\d+\/\d+\)/.test(document.body.innerText), null,
    { timeout: 20000 });
  if (shot) await page.screenshot({ path: shot });
  const title = /\n([^\n]*\(\d+\/\d+\))\n/.exec(await page.evaluate(() => document.body.innerText));
  console.log('title ' + (title ? title[1] : '?'));
  await page.getByText('Sandwich').click();
  await page.getByText('Symbol Name').waitFor({ timeout: 20000 });
  const text = await page.evaluate(() => document.body.innerText);
  const lines = text.split('Symbol Name')[1].split('\n').map((l) => l.trim()).filter((l) => l);
  for (let i = 0; i + 2 < lines.length; i += 3)
    console.log(`row ${lines[i + 2].replace(/ /g, '_')} ${toNs(lines[i])} ${toNs(lines[i + 1])}`);
  await browser.close();
  server.close();
});
