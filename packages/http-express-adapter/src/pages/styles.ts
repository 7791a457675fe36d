import { THEME_COLOR_FIELDS, type ThemeColors } from '@vigil/core';

/** Colours of the pages; status pages may override every one per theme. */
export const LIGHT: Record<(typeof THEME_COLOR_FIELDS)[number], string> = {
  bodyBackgroundColor: '#f6f7f9',
  headerBackgroundColor: '#ffffff',
  headerFontColor: '#1a1d23',
  titleFontColor: '#1a1d23',
  bodyFontColor: '#1f2329',
  bodyFontColorMuted: '#565d69',
  navigationFontColor: '#1f2329',
  linkFontColor: '#0b57d0',
  cardBackgroundColor: '#ffffff',
  borderColor: '#d5d9e0',
  primaryButtonBackgroundColor: '#0b57d0',
  primaryButtonFontColor: '#ffffff',
};

export const DARK: typeof LIGHT = {
  bodyBackgroundColor: '#111418',
  headerBackgroundColor: '#191d23',
  headerFontColor: '#f1f3f5',
  titleFontColor: '#f1f3f5',
  bodyFontColor: '#e3e6ea',
  bodyFontColorMuted: '#a9b0bb',
  navigationFontColor: '#e3e6ea',
  linkFontColor: '#8ab4f8',
  cardBackgroundColor: '#1b1f26',
  borderColor: '#343a44',
  primaryButtonBackgroundColor: '#8ab4f8',
  primaryButtonFontColor: '#111418',
};

// The schema already admits only colour syntax; checked again here because the value lands in CSS.
const SAFE_COLOR = /^(#[0-9a-f]{3,8}|(rgb|rgba|hsl|hsla)\([0-9.%\s,/+-]+\)|[a-z]{3,20})$/i;

const cssName = (field: string) => `--${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

function vars(base: typeof LIGHT, given: Partial<Record<string, string>> | undefined): string {
  return THEME_COLOR_FIELDS.map((f) => {
    const value = given?.[f];
    return `${cssName(f)}:${value && SAFE_COLOR.test(value) ? value : base[f]};`;
  }).join('');
}

/** Custom properties for both themes; AUTO follows the viewer's preference until they choose. */
export function themeCss(colors: ThemeColors | undefined, auto: boolean): string {
  const light = vars(LIGHT, colors?.light);
  const dark = vars(DARK, colors?.dark);
  return [
    `:root,[data-theme=light]{${light}color-scheme:light}`,
    `[data-theme=dark]{${dark}color-scheme:dark}`,
    auto ? `@media (prefers-color-scheme:dark){:root:not([data-theme=light]){${dark}color-scheme:dark}}` : '',
  ].join('\n');
}

/** The one stylesheet of every page (inline: a page is one request). */
export const BASE_CSS = `
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--body-background-color);color:var(--body-font-color)}
a{color:var(--link-font-color)}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:var(--card-background-color);padding:4px 8px;z-index:9}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
header.top{background:var(--header-background-color);color:var(--header-font-color);border-bottom:1px solid var(--border-color)}
.wrap{margin:0 auto;padding:16px;max-width:100%}
.w-960{max-width:960px}
.brand{display:flex;align-items:center;gap:12px;flex-wrap:wrap}
.brand img{max-height:40px;max-width:160px}
h1{font-size:1.5rem;margin:0;color:var(--title-font-color)}
h2{font-size:1.15rem;margin:24px 0 8px;color:var(--title-font-color)}
.muted{color:var(--body-font-color-muted)}
.summary{display:flex;gap:8px;flex-wrap:wrap;margin:12px 0;padding:0;list-style:none}
.summary li{padding:2px 10px;border-radius:12px;border:1px solid var(--border-color);background:var(--card-background-color)}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(280px,1fr));gap:12px;padding:0;margin:0;list-style:none}
.card{background:var(--card-background-color);border:1px solid var(--border-color);border-radius:8px;padding:12px 14px}
.card h3{font-size:1rem;margin:0 0 4px;word-break:break-word}
.state{display:inline-flex;align-items:center;gap:6px;font-weight:600;font-size:.9rem}
.state::before{content:"";width:10px;height:10px;border-radius:50%;background:currentColor}
.s-PASSING,.s-OPERATIONAL{color:#137333}.s-FAILING,.s-DISRUPTED{color:#b3261e}.s-DEGRADED{color:#8a5a00}
.s-MAINTENANCE{color:#1a5fb4}.s-PAUSED,.s-PENDING{color:var(--body-font-color-muted)}
[data-theme=dark] .s-PASSING,[data-theme=dark] .s-OPERATIONAL{color:#81c995}[data-theme=dark] .s-FAILING,[data-theme=dark] .s-DISRUPTED{color:#f28b82}
[data-theme=dark] .s-DEGRADED{color:#fdd663}[data-theme=dark] .s-MAINTENANCE{color:#8ab4f8}
.figures{display:grid;grid-auto-flow:column;justify-content:start;column-gap:14px;margin:6px 0 0;font-size:.9rem}
.figures dt{color:var(--body-font-color-muted)}.figures dd{margin:0;font-weight:600}
.figures div{display:flex;gap:4px}
.tags{display:flex;gap:4px;flex-wrap:wrap;margin:6px 0 0;padding:0;list-style:none}
.tags li{font-size:.8rem;padding:0 6px;border:1px solid var(--border-color);border-radius:4px}
.bar{display:flex;gap:2px;height:28px;margin:8px 0 2px}
.bar span{flex:1;border-radius:2px;background:#137333;min-width:2px}
.bar .b-none{background:var(--border-color)}.bar .b-some{background:#c58a00}.bar .b-down{background:#b3261e}
.bar-legend{display:flex;justify-content:space-between;font-size:.8rem}
[hidden]{display:none!important}
.chart{margin:8px 0 2px;min-width:0}.chart .uplot{width:auto}
.chart-tip{margin:0;min-height:1.3em;font-size:.8rem;color:var(--body-font-color-muted)}
nav.pages ul{display:flex;gap:6px;list-style:none;padding:0;flex-wrap:wrap}
nav.pages a,nav.pages span{display:inline-block;padding:2px 10px;border:1px solid var(--border-color);border-radius:4px}
nav.pages [aria-current]{background:var(--primary-button-background-color);color:var(--primary-button-font-color)}
.incident{border-left:4px solid #b3261e;margin:0 0 12px}
section.card{margin:0 0 16px}.service{margin:12px 0 16px}.service h3{margin:0 0 4px;display:flex;gap:10px;align-items:center;flex-wrap:wrap}.incident.resolved{border-left-color:var(--border-color)}
.incident ol{list-style:none;padding:0;margin:8px 0 0}.incident li{margin:0 0 8px}
.banner{padding:14px 16px;border-radius:8px;font-weight:600;margin:16px 0;background:var(--card-background-color);border:1px solid var(--border-color)}
table{width:100%;border-collapse:collapse;font-size:.9rem}th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--border-color);vertical-align:top}
td.err{word-break:break-word}
button.theme{background:var(--primary-button-background-color);color:var(--primary-button-font-color);border:0;border-radius:6px;padding:6px 12px;font:inherit;cursor:pointer;margin-left:auto}
footer{font-size:.85rem;color:var(--body-font-color-muted)}
form.key{display:flex;gap:8px;flex-wrap:wrap}form.key input{padding:6px;font:inherit}
@media (max-width:600px){.wrap{padding:12px}h1{font-size:1.25rem}.grid{grid-template-columns:1fr}}
`;
