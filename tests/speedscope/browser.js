// Headless Chromium for the viewer checks (view.js, svgview.js): launched
// from CHROMIUM (default /usr/bin/chromium) through playwright-core. When
// either is missing it says why and exits 2 (the caller skips).
async function launch() {
  let chromium;
  try {
    ({ chromium } = require('playwright-core'));
  } catch (e) {
    console.log('cannot load playwright-core: ' + e.message);
    process.exit(2);
  }
  const browserPath = process.env.CHROMIUM || '/usr/bin/chromium';
  try {
    return await chromium.launch({ executablePath: browserPath, args: ['--no-sandbox'] });
  } catch (e) {
    console.log('cannot start ' + browserPath + ': ' + e.message.split('\n')[0]);
    process.exit(2);
  }
}

module.exports = { launch };
