// The console's one stylesheet, served as a hashed file. Light and dark follow the system unless
// the viewer chose one (data-theme on <html>); the layout reads at 375 px wide.

export const CONSOLE_CSS = `:root{color-scheme:light dark;--bg:#f6f7f9;--panel:#fff;--text:#14171c;--muted:#59606b;--line:#d9dde3;--accent:#1f5fd1;--ok:#137a3a;--warn:#8a5a00;--bad:#b3261e;--pause:#5b5f97;--focus:#1f5fd1;--code:#eef1f5}
:root[data-theme=dark]{--bg:#111418;--panel:#1a1e24;--text:#e8eaed;--muted:#a7adb7;--line:#323842;--accent:#8ab4f8;--ok:#5fd08a;--warn:#f2c14e;--bad:#ff8a80;--pause:#b0b4ff;--focus:#8ab4f8;--code:#242a31}
@media (prefers-color-scheme:dark){:root:not([data-theme=light]){--bg:#111418;--panel:#1a1e24;--text:#e8eaed;--muted:#a7adb7;--line:#323842;--accent:#8ab4f8;--ok:#5fd08a;--warn:#f2c14e;--bad:#ff8a80;--pause:#b0b4ff;--focus:#8ab4f8;--code:#242a31}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--text)}
a{color:var(--accent)}
:focus-visible{outline:2px solid var(--focus);outline-offset:2px}
.skip{position:absolute;left:-999px;top:0;background:var(--panel);padding:.5rem}
.skip:focus{left:.5rem}
header.top{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem;padding:.6rem 1rem;background:var(--panel);border-bottom:1px solid var(--line)}
header.top .name{font-weight:700;text-decoration:none;color:var(--text);margin-right:.5rem}
header.top nav ul{display:flex;flex-wrap:wrap;gap:.25rem .9rem;list-style:none;margin:0;padding:0}
header.top nav a[aria-current=page]{font-weight:700;text-decoration:none;color:var(--text)}
header.top .tools{margin-left:auto;display:flex;gap:.5rem;align-items:center}
main{max-width:1200px;margin:0 auto;padding:1rem}
h1{font-size:1.4rem;margin:.2rem 0 1rem}
h2{font-size:1.1rem;margin:1.5rem 0 .6rem}
.panel{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:1rem;margin-bottom:1rem}
button,.button{font:inherit;padding:.4rem .8rem;border-radius:6px;border:1px solid var(--line);background:var(--panel);color:var(--text);cursor:pointer;text-decoration:none;display:inline-block}
button.primary,.button.primary{background:var(--accent);border-color:var(--accent);color:var(--bg)}
button.danger{border-color:var(--bad);color:var(--bad)}
input,select,textarea{font:inherit;padding:.35rem .5rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--text);max-width:100%}
textarea{width:100%;min-height:6rem}
textarea.code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px;min-height:16rem;background:var(--code);tab-size:2;white-space:pre}
.field{margin:0 0 .9rem}
.field label{display:block;font-weight:600;margin-bottom:.2rem}
.field-checkbox{display:flex;flex-wrap:wrap;align-items:center;gap:.2rem .5rem}
.field-checkbox label{display:inline;margin:0}
.field-checkbox .field-help,.field-checkbox .field-error{flex-basis:100%}
.field-help{color:var(--muted);font-size:.85rem;margin:.15rem 0 0}
.field-error,.form-errors{color:var(--bad);font-size:.9rem;margin:.2rem 0 0}
[aria-invalid=true]{border-color:var(--bad)}
fieldset{border:1px solid var(--line);border-radius:6px;margin:0 0 .9rem;padding:.6rem .8rem}
.filters{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end;margin-bottom:1rem}
.filters label{display:flex;flex-direction:column;font-size:.85rem;color:var(--muted)}
table{width:100%;border-collapse:collapse}
th,td{text-align:left;padding:.45rem .5rem;border-bottom:1px solid var(--line);vertical-align:middle}
th{font-size:.8rem;text-transform:uppercase;letter-spacing:.03em;color:var(--muted)}
td.num{font-variant-numeric:tabular-nums;white-space:nowrap}
#checks .row{display:grid;grid-template-columns:minmax(0,30fr) minmax(0,15fr) minmax(0,8fr) minmax(0,21fr) minmax(0,9fr) minmax(0,17fr);align-items:center;border-bottom:1px solid var(--line)}
#checks .row>div{padding:.45rem .5rem;overflow-wrap:anywhere}
#checks .row.head{font-size:.8rem;text-transform:uppercase;letter-spacing:.03em;color:var(--muted);font-weight:700}
#checks .row.empty{display:block}
#checks .num{white-space:nowrap}
#checks-body .row{content-visibility:auto;contain-intrinsic-size:auto 3.2rem}
.state{display:inline-block;padding:.1rem .5rem;border-radius:999px;font-size:.8rem;font-weight:600;border:1px solid currentColor;white-space:nowrap}
.state-passing{color:var(--ok)}.state-degraded{color:var(--warn)}.state-failing{color:var(--bad)}.state-muted,.state-pending{color:var(--muted)}.state-paused,.state-inactive,.state-maintenance{color:var(--pause)}
.spark{display:block;width:100%;max-width:120px;height:28px}
.muted{color:var(--muted)}
.tags{display:flex;flex-wrap:wrap;gap:.25rem}
.tag{font-size:.75rem;background:var(--code);border-radius:4px;padding:0 .35rem}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;margin:.5rem 0 1rem}
.actions form{margin:0}
.notice{border-left:4px solid var(--accent);padding:.5rem .8rem;background:var(--panel);margin-bottom:1rem}
.notice.bad{border-color:var(--bad)}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.chart{width:100%;min-height:240px}
.signin{max-width:420px;margin:3rem auto}
.signin input{width:100%}
dl.figures{display:flex;flex-wrap:wrap;gap:1rem;margin:0}
dl.figures div{min-width:6rem}
dl.figures dt{font-size:.8rem;color:var(--muted)}
dl.figures dd{margin:0;font-size:1.2rem;font-variant-numeric:tabular-nums}
pre{white-space:pre-wrap;word-break:break-word;background:var(--code);padding:.5rem;border-radius:6px;font-size:13px}
@media (max-width:700px){
  th.opt,td.opt{display:none}
  #checks .row{grid-template-columns:minmax(0,40fr) minmax(0,28fr) minmax(0,14fr) minmax(0,18fr)}
  #checks .row>.opt{display:none}
  main{padding:.6rem}
  header.top .tools{margin-left:0}
}
`;
