// The pages' only script: reload for fresh figures, turn dashboard pages, remember the chosen theme.
// Plain ES5 so it runs in any browser a wall display may have; the pages work without it.

export const DASHBOARD_SCRIPT = `(function(){
var d=document.body.dataset,page=+d.page||1,pages=+d.pages||1,refresh=+d.refresh||0,rotate=+d.rotate||0;
function go(p){var u=new URL(location.href);if(p>1)u.searchParams.set('page',String(p));else u.searchParams.delete('page');location.replace(u.toString());}
if(rotate&&pages>1)setTimeout(function(){go(page%pages+1);},rotate*1000);
if(refresh)setTimeout(function(){go(page);},refresh*1000);
})();`;

export const STATUS_PAGE_SCRIPT = `(function(){
var root=document.documentElement,b=document.getElementById('theme-toggle'),key='vigil-theme';
function dark(){var t=root.getAttribute('data-theme');return t?t==='dark':!!(window.matchMedia&&matchMedia('(prefers-color-scheme: dark)').matches&&document.body.dataset.auto==='1');}
function show(){if(b){var on=dark();b.setAttribute('aria-pressed',String(on));b.textContent=on?'Light mode':'Dark mode';}}
try{var saved=localStorage.getItem(key);if(saved==='dark'||saved==='light')root.setAttribute('data-theme',saved);}catch(e){}
if(b)b.addEventListener('click',function(){var t=dark()?'light':'dark';root.setAttribute('data-theme',t);try{localStorage.setItem(key,t);}catch(e){}show();});
show();
var refresh=+document.body.dataset.refresh||0;if(refresh)setTimeout(function(){location.reload();},refresh*1000);
})();`;
