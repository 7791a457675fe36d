/**
 * Page functions, as source text, that hide secret values on a page while a screenshot is taken and
 * put the text back afterwards: text nodes and form fields, in the forms scrubSecrets knows (as is,
 * URL-encoded, base64). Kept as text so that no build step can rewrite them before they reach the page.
 */
export const MASK_PAGE = {
  hide: `function vigilHideSecrets(secrets) {
  var MASK = '********';
  var forms = [];
  secrets.forEach(function (s) {
    if (s.length < 3) return;
    forms.push(s, encodeURIComponent(s));
    try { forms.push(btoa(unescape(encodeURIComponent(s)))); } catch (e) {}
  });
  forms.sort(function (a, b) { return b.length - a.length; });
  var replace = function (text) {
    var out = text;
    forms.forEach(function (f) { out = out.split(f).join(MASK); });
    return out;
  };
  var undo = [];
  var root = document.documentElement;
  if (root) {
    var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (var node = walker.nextNode(); node; node = walker.nextNode()) {
      var masked = replace(node.nodeValue);
      if (masked !== node.nodeValue) { undo.push([node, 'nodeValue', node.nodeValue]); node.nodeValue = masked; }
    }
    document.querySelectorAll('input, textarea').forEach(function (el) {
      var maskedValue = replace(el.value);
      if (maskedValue !== el.value) { undo.push([el, 'value', el.value]); el.value = maskedValue; }
    });
  }
  window[Symbol.for('vigil.unmask')] = undo;
  return undo.length;
}`,
  show: `function vigilShowSecrets() {
  var undo = window[Symbol.for('vigil.unmask')] || [];
  for (var i = undo.length - 1; i >= 0; i--) undo[i][0][undo[i][1]] = undo[i][2];
  delete window[Symbol.for('vigil.unmask')];
}`,
};

/** The page functions as functions, for puppeteer's evaluate (it sends their source to the page). */
export function maskFunctions(): { hide: (secrets: string[]) => number; show: () => void } {
  return {
    hide: new Function(`return (${MASK_PAGE.hide})`)() as (secrets: string[]) => number,
    show: new Function(`return (${MASK_PAGE.show})`)() as () => void,
  };
}
