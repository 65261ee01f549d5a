(function(){
  var selects = document.querySelectorAll('select[data-filter]');
  function apply(){
    var shown = 0, rows = document.querySelectorAll('details.item');
    rows.forEach(function(row){
      var ok = true;
      selects.forEach(function(s){
        if (!s.value) return;
        var have = (row.dataset[s.dataset.filter] || '').split(' ');
        if (have.indexOf(s.value) < 0) ok = false;
      });
      row.hidden = !ok; if (ok) shown++;
    });
    var note = document.querySelector('.filters .shown');
    if (note) note.textContent = shown + ' of ' + rows.length + ' items shown';
  }
  selects.forEach(function(s){ s.addEventListener('change', apply); });
  apply();
})();
