// The pages' own script: charts, reloads for fresh figures, dashboard pages that turn, the chosen
// theme. Plain ES5 so it runs in any browser a wall display may have; the pages work without it.

// Charts (uPlot, loaded before this script from the router's own hashed file): each card's
// response-time sparkline, drawn as it comes near the viewport, and a status page's daily uptime
// bars, which take the place of the plain bars (kept for readers without script).
const CHARTS = `function vigilCharts(){
if(!window.uPlot)return;
function color(name,fallback){var v=getComputedStyle(document.documentElement).getPropertyValue(name).trim();return v||fallback;}
function spark(el,box){
  var values;try{values=JSON.parse(el.getAttribute('data-values')||'[]');}catch(e){return;}
  if(!values.some(function(v){return v!==null;}))return;
  var few=values.filter(function(v){return v!==null;}).length<3;
  new uPlot({width:Math.round(box.width)||160,height:Math.round(box.height)||32,padding:[4,4,4,4],cursor:{show:false},legend:{show:false},select:{show:false},
    scales:{x:{time:false,range:[0,values.length-1]}},axes:[{show:false},{show:false}],
    series:[{},{stroke:color('--link-font-color','#1a73e8'),width:1.5,points:{show:few,size:4}}]},[values.map(function(_,i){return i;}),values],el);
}
var seen=window.IntersectionObserver?new IntersectionObserver(function(entries){
  entries.forEach(function(e){if(e.isIntersecting){seen.unobserve(e.target);spark(e.target,e.boundingClientRect);}});
},{rootMargin:'200px'}):null;
Array.prototype.forEach.call(document.querySelectorAll('.spark[data-values]'),function(el){if(seen)seen.observe(el);else spark(el,el.getBoundingClientRect());});
Array.prototype.forEach.call(document.querySelectorAll('.uptime-chart[data-days]'),function(el){
  var days;try{days=JSON.parse(el.getAttribute('data-days')||'[]');}catch(e){return;}
  var plain=el.previousElementSibling;
  var xs=days.map(function(_,i){return i;});
  function only(cls){return days.map(function(d){return d[1]===cls?(d[0]===null?0:Math.max(d[0],2)):null;});}
  var none=days.map(function(d){return d[0]===null?100:null;});
  el.hidden=false;
  el.setAttribute('role','img');
  if(plain){el.setAttribute('aria-label',plain.getAttribute('aria-label')||'');plain.hidden=true;}
  var bars=uPlot.paths.bars({size:[0.8,Infinity],gap:1});
  new uPlot({width:el.clientWidth||600,height:40,padding:[2,0,0,0],cursor:{show:false},legend:{show:false},select:{show:false},
    scales:{x:{time:false,range:[-0.5,days.length-0.5]},y:{range:[0,100]}},axes:[{show:false},{show:false}],
    series:[{},{fill:'#137333',stroke:'#137333',paths:bars,points:{show:false}},{fill:'#c58a00',stroke:'#c58a00',paths:bars,points:{show:false}},
      {fill:'#b3261e',stroke:'#b3261e',paths:bars,points:{show:false}},{fill:color('--border-color','#ddd'),stroke:color('--border-color','#ddd'),paths:bars,points:{show:false}}]},
    [xs,only('b-ok'),only('b-some'),only('b-down'),none],el);
});
}`;

export const DASHBOARD_SCRIPT = `(function(){
${CHARTS}
vigilCharts();
var d=document.body.dataset,page=+d.page||1,pages=+d.pages||1,refresh=+d.refresh||0,rotate=+d.rotate||0;
function go(p){var u=new URL(location.href);if(p>1)u.searchParams.set('page',String(p));else u.searchParams.delete('page');location.replace(u.toString());}
if(rotate&&pages>1)setTimeout(function(){go(page%pages+1);},rotate*1000);
if(refresh)setTimeout(function(){go(page);},refresh*1000);
})();`;

export const STATUS_PAGE_SCRIPT = `(function(){
${CHARTS}
vigilCharts();
var root=document.documentElement,b=document.getElementById('theme-toggle'),key='vigil-theme';
function dark(){var t=root.getAttribute('data-theme');return t?t==='dark':!!(window.matchMedia&&matchMedia('(prefers-color-scheme: dark)').matches&&document.body.dataset.auto==='1');}
function show(){if(b){var on=dark();b.setAttribute('aria-pressed',String(on));b.textContent=on?'Light mode':'Dark mode';}}
try{var saved=localStorage.getItem(key);if(saved==='dark'||saved==='light')root.setAttribute('data-theme',saved);}catch(e){}
if(b)b.addEventListener('click',function(){var t=dark()?'light':'dark';root.setAttribute('data-theme',t);try{localStorage.setItem(key,t);}catch(e){}show();});
show();
var refresh=+document.body.dataset.refresh||0;if(refresh)setTimeout(function(){location.reload();},refresh*1000);
})();`;
