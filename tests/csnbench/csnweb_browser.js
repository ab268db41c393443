// csnweb_browser.js: Debian's chromium, headless, driven by playwright-core, opens csn-web,
// starts a quick run from the form, waits for the report and saves a screenshot.
// usage: node csnweb_browser.js URL SCREENSHOT.png
const { chromium } = require('playwright-core');

(async () => {
  const [url, shot] = process.argv.slice(2);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
           '--disable-dev-shm-usage', '--no-first-run', '--disable-extensions'],
  });
  let rc = 1;
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    page.setDefaultTimeout(240000);
    await page.goto(url);
    // Only two quick tests, so that the run is short.
    for (const t of ['nettest', 'logp', 'threadtest', 'pipeline', 'linkmatrix'])
      await page.uncheck(`input[name=tests][value=${t}]`);
    await page.fill('#maxsize', '64K');
    await Promise.all([page.waitForURL(/\/runs\/[0-9-]+\/$/), page.click('#start')]);
    await page.waitForFunction(() => document.getElementById('progress').textContent.includes('[1/'));
    console.log('progress streamed: ' + (await page.textContent('#progress')).split('\n')[0]);
    await page.waitForSelector('#reportlink');
    const state = await page.textContent('#state');
    console.log('run state: ' + state);
    const frame = page.frameLocator('iframe');
    await frame.locator('#pingpong').waitFor();
    await page.screenshot({ path: shot, fullPage: true });
    console.log('screenshot: ' + shot);
    rc = state === 'done' ? 0 : 1;
  } catch (e) {
    console.log('FAIL: ' + e);
  } finally {
    await browser.close();
  }
  process.exit(rc);
})();
