/** Puppeteer never downloads a browser here: checks run in the system's Chromium. */
module.exports = {
  skipDownload: true,
  executablePath: process.env.PUPPETEER_EXECUTABLE_PATH || '/usr/bin/chromium',
};
