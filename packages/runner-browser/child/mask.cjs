'use strict';
/*
 * Hides a run's secret values on a page while a screenshot is taken, and puts them back after.
 * Used by the host (failure screenshots) and by the script's process (page.screenshot()), so it is
 * plain CommonJS that both load. Secrets are hidden in the forms scrubSecrets knows (as they are,
 * URL-encoded, base64):
 *
 * - in every frame of the page, cross-origin ones included (each through its own context), the
 *   text of the document and of every open shadow root in it, and the values of form fields;
 * - through the DevTools protocol, text that page scripts cannot reach: closed shadow roots (and
 *   the same-process frames' documents, again).
 *
 * A frame that could not be masked makes the whole attempt fail: the caller then takes no image.
 */

const MASK = '********';

/** The forms of each secret to hide, longest first (so that no shorter one splits a longer). */
function secretForms(secrets) {
  const forms = new Set();
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret.length < 3) continue;
    forms.add(secret);
    forms.add(encodeURIComponent(secret));
    forms.add(Buffer.from(secret, 'utf8').toString('base64'));
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

function replaceAll(text, forms) {
  let out = text;
  for (const form of forms) out = out.split(form).join(MASK);
  return out;
}

/*
 * The functions that run in each frame, kept as text so that no build step (a bundler adding its
 * helpers) can rewrite them before they reach the page.
 */
const PAGE_HIDE = `function pageHide(forms, mask) {
  const replace = (text) => {
    let out = text;
    for (const form of forms) out = out.split(form).join(mask);
    return out;
  };
  const undo = [];
  const visit = (root) => {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT | NodeFilter.SHOW_ELEMENT);
    for (let node = walker.currentNode; node; node = walker.nextNode()) {
      if (node.nodeType === Node.TEXT_NODE) {
        const masked = replace(node.nodeValue);
        if (masked !== node.nodeValue) {
          undo.push([node, 'nodeValue', node.nodeValue]);
          node.nodeValue = masked;
        }
      } else {
        if ((node.tagName === 'INPUT' || node.tagName === 'TEXTAREA') && typeof node.value === 'string') {
          const masked = replace(node.value);
          if (masked !== node.value) {
            undo.push([node, 'value', node.value]);
            node.value = masked;
          }
        }
        if (node.shadowRoot) visit(node.shadowRoot);
      }
    }
  };
  if (document.documentElement) visit(document.documentElement);
  const key = Symbol.for('vigil.unmask');
  window[key] = (window[key] || []).concat(undo);
  return undo.length;
}`;
const PAGE_SHOW = `function pageShow() {
  const key = Symbol.for('vigil.unmask');
  const undo = window[key] || [];
  for (let i = undo.length - 1; i >= 0; i--) undo[i][0][undo[i][1]] = undo[i][2];
  delete window[key];
}`;
const pageHide = new Function(`return (${PAGE_HIDE})`)();
const pageShow = new Function(`return (${PAGE_SHOW})`)();

/** Text nodes anywhere under `node` (shadow roots, closed ones too, and frames' documents), as the protocol describes them. */
function* textNodes(node) {
  if (!node) return;
  if (node.nodeType === 3) yield node;
  for (const child of node.children || []) yield* textNodes(child);
  for (const root of node.shadowRoots || []) yield* textNodes(root);
  if (node.contentDocument) yield* textNodes(node.contentDocument);
}

/**
 * Hides `secrets` on `page` (a puppeteer Page). Answers whether all of it was hidden, and a
 * function that shows the page as it was.
 */
async function hideSecrets(page, secrets) {
  const forms = secretForms(secrets);
  const nothing = { hidden: true, restore: async () => {} };
  if (forms.length === 0) return nothing;
  const frames = page.frames();
  // A frame that detached meanwhile throws as soon as it is called, not in the promise it would return.
  const evaluate = async (frame, fn, ...args) => frame.evaluate(fn, ...args);
  const masked = await Promise.all(frames.map((frame) => evaluate(frame, pageHide, forms, MASK).then(() => true, () => frame.detached === true)));
  const showFrames = async () => {
    await Promise.all(frames.map((frame) => evaluate(frame, pageShow).catch(() => {})));
  };
  let session = null;
  const restored = [];
  try {
    session = await page.createCDPSession();
    const { root } = await session.send('DOM.getDocument', { depth: -1, pierce: true });
    for (const node of textNodes(root)) {
      const value = replaceAll(node.nodeValue, forms);
      if (value === node.nodeValue) continue;
      await session.send('DOM.setNodeValue', { nodeId: node.nodeId, value });
      restored.push([node.nodeId, node.nodeValue]);
    }
  } catch {
    masked.push(false);
  }
  const restore = async () => {
    if (session) {
      for (const [nodeId, value] of restored.reverse()) await session.send('DOM.setNodeValue', { nodeId, value }).catch(() => {});
      await session.detach().catch(() => {});
    }
    await showFrames();
  };
  return { hidden: masked.every(Boolean), restore };
}

module.exports = { hideSecrets, secretForms, MASK };
