// Draws the pages' charts with uPlot from the JSON in #vigil-chart-data: a response-time sparkline
// per check on dashboards, daily uptime bars per service on status pages. Served as a file of its
// own (hashed, cached); the pages show every figure without it. Colours are read from the page's
// CSS variables at each draw, so a theme switch only redraws.

export const CHART_SCRIPT = `(function(){
var src=document.getElementById('vigil-chart-data');
if(!src||typeof uPlot!=='function')return;
var data;try{data=JSON.parse(src.textContent||'');}catch(e){return;}
var charts=[];
function css(name,fallback){var v=getComputedStyle(document.body).getPropertyValue(name).trim();return v||fallback;}
function hm(t){var d=new Date(t*1000);return ('0'+d.getUTCHours()).slice(-2)+':00 UTC';}
function tip(box){var p=document.createElement('p');p.className='chart-tip';p.setAttribute('aria-hidden','true');box.appendChild(p);return p;}
function lonely(u,si){var ys=u.data[si],out=[];for(var i=0;i<ys.length;i++)if(ys[i]!=null&&ys[i-1]==null&&ys[i+1]==null)out.push(i);return out;}
function spark(box,c){
  var t=tip(box);
  return {height:44,legend:{show:false},select:{show:false},
    cursor:{y:false,drag:{x:false,y:false},points:{size:6}},
    scales:{x:{time:false},y:{range:function(u,min,max){return [0,max>0?max*1.15:1];}}},
    axes:[{show:false},{show:false}],
    series:[{},{label:'median ms',spanGaps:false,width:1.5,
      stroke:function(){return css('--link-font-color','#0b57d0');},
      points:{show:true,size:4,filter:lonely,fill:function(){return css('--link-font-color','#0b57d0');}}}],
    hooks:{setCursor:[function(u){var i=u.cursor.idx;
      t.textContent=i==null?'':hm(c.t[i])+': '+(c.p50[i]==null?'no runs':c.p50[i]+' ms median, '+c.runs[i]+' runs');}]},
    data:[c.t,c.p50]};
}
var DAY_COLORS=['#137333','#c58a00','#b3261e'];
function days(box,c){
  var t=tip(box),n=c.cls.length,xs=[],levels=[[],[],[],[]];
  for(var i=0;i<n;i++){xs.push(i);for(var k=0;k<4;k++)levels[k].push(c.cls[i]===k?1:null);}
  function bars(k){return {label:'',paths:uPlot.paths.bars({size:[0.8,24],gap:1}),points:{show:false},width:0,
    fill:function(){return k===3?css('--border-color','#d5d9e0'):DAY_COLORS[k];}};}
  return {height:32,legend:{show:false},select:{show:false},
    cursor:{y:false,drag:{x:false,y:false},points:{show:false}},
    scales:{x:{time:false,range:[-0.5,n-0.5]},y:{range:[0,1]}},
    axes:[{show:false},{show:false}],
    series:[{},bars(0),bars(1),bars(2),bars(3)],
    hooks:{setCursor:[function(u){var i=u.cursor.idx;t.textContent=i==null?'':c.dates[i]+': '+c.labels[i];}]},
    data:[xs].concat(levels)};
}
var boxes=document.querySelectorAll('[data-chart]');
for(var b=0;b<boxes.length;b++){
  var box=boxes[b],c=data.charts&&data.charts[+box.getAttribute('data-chart')];
  // A check without runs in the day keeps its box hidden rather than an empty chart.
  if(!c||(c.kind==='spark'&&!c.p50.some(function(v){return v!=null;})))continue;
  // The plain bar gives way only once its chart is built: a chart that fails leaves the page as it was.
  try{
    var o=c.kind==='days'?days(box,c):spark(box,c);
    box.hidden=false;
    o.width=Math.max(box.clientWidth,60);
    var d=o.data;delete o.data;
    var u=new uPlot(o,d,box);
    box.insertBefore(u.root,box.firstChild);
    charts.push({u:u,box:box,h:o.height});
    var fallback=box.getAttribute('data-fallback');
    if(fallback){var f=document.getElementById(fallback);if(f)f.hidden=true;}
  }catch(e){box.hidden=true;}
}
// Paths too: a bar keeps the fill it was built with.
function redraw(){for(var i=0;i<charts.length;i++)charts[i].u.redraw();}
if(window.ResizeObserver){var ro=new ResizeObserver(function(){for(var i=0;i<charts.length;i++){var w=Math.max(charts[i].box.clientWidth,60);if(w!==charts[i].u.width)charts[i].u.setSize({width:w,height:charts[i].h});}});
  for(var j=0;j<charts.length;j++)ro.observe(charts[j].box);}
if(window.MutationObserver)new MutationObserver(redraw).observe(document.documentElement,{attributes:true,attributeFilter:['data-theme']});
if(window.matchMedia){var mq=matchMedia('(prefers-color-scheme: dark)');if(mq.addEventListener)mq.addEventListener('change',redraw);}
document.documentElement.setAttribute('data-charts',String(charts.length));
})();`;
