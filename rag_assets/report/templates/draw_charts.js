// Draws every chart spec of the page as SVG; window.reportCharts settles when all are drawn.
window.reportCharts = Promise.all(Array.from(document.querySelectorAll('script[data-chart]'), function(s){
  return vegaEmbed('#' + s.dataset.chart, JSON.parse(s.textContent), {renderer: 'svg', actions: false})
    .catch(function(e){ document.getElementById(s.dataset.chart).textContent = 'chart failed: ' + e; });
}));
