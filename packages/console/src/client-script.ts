// The console's script, served as a hashed file beside uPlot. Every page works without it (links,
// forms and server-rendered tables); it adds charts, live rows, "Run now" progress, the theme
// switch and Tab in the code editor. It never builds markup from data: rows come rendered (and
// escaped) by the server, everything else is set as text.

export const CONSOLE_SCRIPT = `(function(){
'use strict';
var root=document.documentElement;
var csrf=(document.querySelector('meta[name=csrf-token]')||{}).content||'';

/* Theme: the system's unless the viewer chose one. */
var toggle=document.getElementById('theme-toggle'),key='vigil-console-theme';
function dark(){var t=root.getAttribute('data-theme');return t?t==='dark':!!(window.matchMedia&&matchMedia('(prefers-color-scheme: dark)').matches);}
function showTheme(){if(toggle){var on=dark();toggle.setAttribute('aria-pressed',String(on));toggle.textContent=on?'Light mode':'Dark mode';}}
try{var saved=localStorage.getItem(key);if(saved==='dark'||saved==='light')root.setAttribute('data-theme',saved);}catch(e){}
if(toggle)toggle.addEventListener('click',function(){var t=dark()?'light':'dark';root.setAttribute('data-theme',t);try{localStorage.setItem(key,t);}catch(e){}showTheme();drawAll(document);});
showTheme();

function css(name){return getComputedStyle(root).getPropertyValue(name).trim()||'#888';}

/* Sparklines: data-values is a JSON array of numbers or nulls (one per hour). */
function spark(el,box){
  if(!window.uPlot)return;
  var values;try{values=JSON.parse(el.getAttribute('data-values')||'[]');}catch(e){return;}
  el.textContent='';
  if(!values.some(function(v){return v!==null;}))return;
  var xs=values.map(function(_,i){return i;});
  /* Hours with runs between hours without are dots: a line needs two neighbours. */
  var lonely=values.filter(function(v){return v!==null;}).length<3;
  /* The observer's box gives the size without asking for a layout between one chart and the next. */
  var w=box?box.width:el.clientWidth,hgt=box?box.height:el.clientHeight;
  new uPlot({width:Math.round(w)||120,height:Math.round(hgt)||28,padding:[4,4,4,4],cursor:{show:false},legend:{show:false},select:{show:false},
    scales:{x:{time:false,range:[0,values.length-1]}},axes:[{show:false},{show:false}],
    series:[{},{stroke:css('--accent'),width:1.5,spanGaps:false,points:{show:lonely,size:4,fill:css('--accent')}}]},[xs,values],el);
}
/* A sparkline is drawn when its row comes near the viewport: a list of 1,000 checks draws the few on screen. */
var seen=window.IntersectionObserver?new IntersectionObserver(function(entries){
  entries.forEach(function(e){if(e.isIntersecting){seen.unobserve(e.target);spark(e.target,e.boundingClientRect);}});
},{rootMargin:'200px'}):null;
function drawAll(scope){
  Array.prototype.forEach.call(scope.querySelectorAll('.spark[data-values]'),function(el){if(seen)seen.observe(el);else spark(el);});
  Array.prototype.forEach.call(scope.querySelectorAll('.chart[data-series]'),chart);
}

/* The response-time chart of a check page: data-series is {from,to,t:[epoch s],p50:[],p95:[],p99:[]}. */
function chart(el){
  if(!window.uPlot)return;
  var d;try{d=JSON.parse(el.getAttribute('data-series')||'{}');}catch(e){return;}
  el.textContent='';
  if(!d.t||!d.t.length){el.textContent='No runs in this range.';return;}
  var few=d.t.length<3;
  new uPlot({width:el.clientWidth||600,height:240,
    scales:d.from&&d.to?{x:{range:[d.from,d.to]}}:{},
    series:[{},{label:'p50',stroke:css('--ok'),width:1.5,points:{show:few}},{label:'p95',stroke:css('--warn'),width:1.5,points:{show:few}},{label:'p99',stroke:css('--bad'),width:1.5,points:{show:few}}],
    axes:[{stroke:css('--muted')},{stroke:css('--muted'),size:70,values:function(u,v){return v.map(function(x){return x+' ms';});}}]},
    [d.t,d.p50,d.p95,d.p99],el);
}

/* Live rows of the home page: the server renders the rows, the script swaps them in. */
var table=document.getElementById('checks-body');
var filters=document.getElementById('filters');
function rowsUrl(){var u=new URL(location.href);u.searchParams.set('fragment','rows');return u.toString();}
/* Only the newest answer is shown: one for an older filter may arrive after it. */
var asked=0;
function refreshRows(){
  if(!table)return;
  var mine=++asked;
  fetch(rowsUrl(),{credentials:'same-origin',headers:{accept:'text/html'}}).then(function(r){
    if(r.status===401){location.reload();return null;}
    return r.ok?r.text():null;
  }).then(function(html){
    if(html===null||html===undefined||mine!==asked)return;
    if(seen)seen.disconnect();
    table.innerHTML=html;
    var count=document.getElementById('checks-count');if(count)count.textContent=String(table.querySelectorAll('[data-check]').length);
    drawAll(table);
  }).catch(function(){});
}
if(table){
  var every=(+document.body.getAttribute('data-refresh')||0)*1000;
  if(every)setInterval(function(){if(!document.hidden)refreshRows();},every);
}
if(filters){
  var timer=null;
  function apply(){
    var u=new URL(location.href),fd=new FormData(filters);
    ['q','tag','type','state','group'].forEach(function(k){var v=fd.get(k);if(v)u.searchParams.set(k,String(v));else u.searchParams.delete(k);});
    history.replaceState(null,'',u.toString());refreshRows();
  }
  filters.addEventListener('input',function(){clearTimeout(timer);timer=setTimeout(apply,200);});
  filters.addEventListener('submit',function(e){e.preventDefault();apply();});
}

/* Run now: the session's progress until it is final, then the page again. */
var run=document.getElementById('run-now');
var progress=document.getElementById('run-progress');
/* Polls a little less often as a run goes on, and gives up after ten minutes or on an error. */
var pollStart=0;
function poll(url){
  if(!pollStart)pollStart=Date.now();
  fetch(url,{credentials:'same-origin',headers:{accept:'application/json'}}).then(function(r){
    if(r.status===401){location.reload();return null;}
    if(!r.ok)throw new Error(String(r.status));
    return r.json();
  }).then(function(s){
    if(!s)return;
    if(progress)progress.textContent=s.text;
    var waited=Date.now()-pollStart;
    if(s.final){setTimeout(function(){location.reload();},400);return;}
    if(waited>600000){if(progress)progress.textContent=s.text+' Reload the page to see how it ends.';return;}
    setTimeout(function(){poll(url);},Math.min(5000,700+waited/20));
  }).catch(function(){if(progress)progress.textContent='Could not read the run\\'s progress. Reload the page to see it.';});
}
if(run)run.addEventListener('submit',function(e){
  e.preventDefault();
  if(progress)progress.textContent='Starting…';
  fetch(run.action,{method:'POST',credentials:'same-origin',headers:{accept:'application/json','x-csrf-token':csrf}}).then(function(r){return r.json();}).then(function(s){
    if(s.progressUrl)poll(s.progressUrl);else if(progress)progress.textContent=s.message||'Could not start the run.';
  }).catch(function(){if(progress)progress.textContent='Could not start the run.';});
});
if(progress&&progress.getAttribute('data-progress'))poll(progress.getAttribute('data-progress'));

/* Tab indents in the code editor; Escape first lets Tab move on, so the keyboard is never trapped. */
Array.prototype.forEach.call(document.querySelectorAll('textarea.code'),function(ta){
  var escaped=false;
  ta.addEventListener('keydown',function(e){
    if(e.key==='Escape'){escaped=true;return;}
    if(e.key==='Tab'&&!e.shiftKey&&!escaped){e.preventDefault();var s=ta.selectionStart,en=ta.selectionEnd;ta.value=ta.value.slice(0,s)+'  '+ta.value.slice(en);ta.selectionStart=ta.selectionEnd=s+2;}
    else escaped=false;
  });
});

drawAll(document);
})();`;
