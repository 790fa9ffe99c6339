// SPDX-License-Identifier: Apache-2.0
// bridge/views/html/viewer.js: the behaviour of the page `tracewire show --html` writes
// (embedded in the page at build time; no network, no libraries).
//
// The page already holds one row per span (html.c writes them in depth-first order with
// data-depth); this script adds: collapsing a subtree (its rows get the class tw-hidden:
// hidden, never removed, so search still finds them), a search box over service, operation,
// ids, tags, process and logs (matches are highlighted, their ancestors expanded, Enter
// steps through them), and a detail pane with a span's tags, logs, references and process
// read from the trace's JSON block; a reference links to its span in whichever section holds
// it (a trace the window split is in several sections).
(function () {
  'use strict';
  var traces = [];      // per section: {el, rows: [row elements], data: parsed JSON}
  var matches = [];     // rows matching the search, in page order
  var matchAt = -1;
  var selected = null;

  function text(el, s) { el.textContent = s; return el; }
  function make(tag, cls, s) {
    var el = document.createElement(tag);
    if (cls) el.className = cls;
    if (s !== undefined) el.textContent = s;
    return el;
  }
  function fmtDur(us) {
    if (us < 0) return '?';
    if (us < 1000) return us + ' \u00b5s';
    if (us < 1e6) return (us / 1e3).toFixed(3) + ' ms';
    if (us < 1e8) return (us / 1e6).toFixed(3) + ' s';
    return (us / 1e6).toFixed(1) + ' s';
  }

  // ---- collapsing -------------------------------------------------------------------------
  function depth(row) { return +row.getAttribute('data-depth'); }
  // Shows or hides the rows below @row; rows under a collapsed descendant stay hidden.
  function applyFold(rows, i) {
    var d = depth(rows[i]);
    var hideBelow = rows[i].classList.contains('tw-collapsed') ? d : Infinity;
    var stack = [];
    for (var j = i + 1; j < rows.length && depth(rows[j]) > d; j++) {
      var dj = depth(rows[j]);
      while (stack.length && stack[stack.length - 1] >= dj) stack.pop();
      var hidden = dj > hideBelow || stack.length > 0;
      rows[j].classList.toggle('tw-hidden', hidden);
      if (rows[j].classList.contains('tw-collapsed')) stack.push(dj);
    }
  }
  function setCollapsed(tr, i, collapsed) {
    var row = tr.rows[i];
    var btn = row.querySelector('.tw-tog');
    if (!btn || btn.disabled) return;
    row.classList.toggle('tw-collapsed', collapsed);
    btn.textContent = collapsed ? '\u25b8' : '\u25be';
    btn.setAttribute('aria-expanded', collapsed ? 'false' : 'true');
    applyFold(tr.rows, i);
  }
  // Expands every collapsed ancestor of row @i so that it shows.
  function reveal(tr, i) {
    var d = depth(tr.rows[i]);
    for (var j = i - 1; j >= 0 && d > 0; j--) {
      var dj = depth(tr.rows[j]);
      if (dj < d) {
        if (tr.rows[j].classList.contains('tw-collapsed')) setCollapsed(tr, j, false);
        d = dj;
      }
    }
    tr.el.classList.remove('tw-folded');
  }

  // ---- search ------------------------------------------------------------------------------
  function haystack(s) {
    var parts = [s.service, s.operation, s.span_id, s.parent_id || '', s.kind || ''];
    (s.tags || []).forEach(function (t) { parts.push(t[0] + '=' + t[1]); });
    (s.process ? s.process.tags : []).forEach(function (t) { parts.push(t[0] + '=' + t[1]); });
    (s.logs || []).forEach(function (l) {
      l.fields.forEach(function (f) { parts.push(f[0] + '=' + f[1]); });
    });
    return parts.join('\n').toLowerCase();
  }
  function search(q) {
    q = q.trim().toLowerCase();
    matches = [];
    matchAt = -1;
    var total = 0;
    traces.forEach(function (tr) {
      tr.rows.forEach(function (row, i) {
        var k = row.getAttribute('data-k');
        if (k === null) return;
        total++;
        var hit = q !== '' && tr.hay[+k].indexOf(q) >= 0;
        row.classList.toggle('tw-match', hit);
        row.classList.toggle('tw-dim', q !== '' && !hit);
        if (hit) {
          matches.push(row);
          reveal(tr, i);
        }
      });
    });
    text(document.getElementById('tw-count'),
         q === '' ? total + ' spans' : matches.length + ' of ' + total + ' spans match');
  }
  function step(delta) {
    if (!matches.length) return;
    matchAt = (matchAt + delta + matches.length) % matches.length;
    select(matches[matchAt]);
    matches[matchAt].scrollIntoView({block: 'center'});
  }

  // ---- details -----------------------------------------------------------------------------
  // The row of span @spanId of trace @traceId: {tr, i}, looked for in section @tr first, then
  // in the others (a trace the window split reaches the page in parts, a section each, and a
  // reference can name a span of another part, or of another trace); null when no section
  // holds it.
  function findRow(tr, traceId, spanId) {
    var id = 's-' + traceId + '-' + spanId;
    var order = [tr].concat(traces.filter(function (o) { return o !== tr; }));
    for (var n = 0; n < order.length; n++) {
      var i = order[n].rowOf[id];
      if (i !== undefined) return {tr: order[n], i: i};
    }
    return null;
  }
  function goTo(at) {
    reveal(at.tr, at.i);
    select(at.tr.rows[at.i]);
    at.tr.rows[at.i].scrollIntoView({block: 'center'});
  }
  function table(pairs) {
    if (!pairs || !pairs.length) return make('p', 'tw-empty', 'none');
    var t = make('table');
    pairs.forEach(function (p) {
      var tr = make('tr');
      tr.appendChild(make('td', 'k', p[0]));
      tr.appendChild(make('td', 'v', p[1]));
      t.appendChild(tr);
    });
    return t;
  }
  function select(row) {
    if (selected) selected.classList.remove('tw-selected');
    selected = row;
    row.classList.add('tw-selected');
    var tr = traces[+row.closest('section').getAttribute('data-trace')];
    var k = row.getAttribute('data-k');
    var pane = document.getElementById('tw-detail');
    pane.textContent = '';
    if (k === null) {
      pane.appendChild(make('h3', '', row.textContent.trim()));
      pane.appendChild(make('p', 'tw-empty', 'This span is not in the input: the spans below it name it as their parent.'));
      return;
    }
    var s = tr.data.spans[+k];
    pane.appendChild(make('h3', '', s.service + ': ' + s.operation));
    var facts = [['span id', s.span_id], ['parent id', s.parent_id ? s.parent_id + (s.follows_from ? ' (follows from)' : '') : '(root)'],
                 ['trace id', tr.data.trace_id], ['start', '+' + fmtDur(s.start_us)],
                 ['duration', s.duration_us === null ? 'unknown' : fmtDur(s.duration_us)],
                 ['self time', s.self_us === null ? 'unknown' : fmtDur(s.self_us)],
                 ['kind', s.kind || 'internal']];
    if (s.critical_us) facts.push(['critical path', fmtDur(s.critical_us)]);
    if (s.error) facts.push(['error', 'yes']);
    if (s.skew) facts.push(['clock skew', 'starts before its parent']);
    if (s.missing_parent) {
      var elsewhere = findRow(tr, tr.data.trace_id, s.missing_parent);
      facts.push(['orphan', 'parent ' + s.missing_parent +
                  (elsewhere ? ' is in another part of this trace (a section of its own)'
                             : ' is not in the input')]);
    }
    pane.appendChild(table(facts));
    pane.appendChild(make('h4', '', 'Tags'));
    pane.appendChild(table(s.tags));
    pane.appendChild(make('h4', '', 'Logs'));
    if (!s.logs.length) pane.appendChild(make('p', 'tw-empty', 'none'));
    s.logs.forEach(function (l) {
      pane.appendChild(make('div', 'tw-logtime', '+' + fmtDur(l.offset_us)));
      pane.appendChild(table(l.fields));
    });
    pane.appendChild(make('h4', '', 'References'));
    if (!s.refs.length) pane.appendChild(make('p', 'tw-empty', 'none'));
    s.refs.forEach(function (r) {
      var p = make('p');
      p.appendChild(document.createTextNode(r.type + ' '));
      var at = findRow(tr, r.trace_id, r.span_id);
      if (at) {
        var a = make('a', '', r.span_id);
        a.href = '#';
        a.addEventListener('click', function (e) {
          e.preventDefault();
          goTo(at);
        });
        p.appendChild(a);
      } else {
        p.appendChild(document.createTextNode(r.span_id));
      }
      var where = ' in trace ' + r.trace_id;
      if (!at) where += ' (not on this page)';
      else if (at.tr !== tr && r.trace_id === tr.data.trace_id) where += ' (in another part of this trace)';
      p.appendChild(document.createTextNode(where));
      pane.appendChild(p);
    });
    pane.appendChild(make('h4', '', 'Process'));
    pane.appendChild(table([['service', s.process.service]].concat(s.process.tags)));
  }

  // ---- start -------------------------------------------------------------------------------
  function init() {
    document.querySelectorAll('section.tw-trace').forEach(function (el, n) {
      var block = document.getElementById('tw-data-' + n);
      var data = JSON.parse(block.textContent);
      var rows = Array.prototype.slice.call(el.querySelectorAll('.tw-row'));
      var rowOf = {}; // row id -> index in rows
      rows.forEach(function (row, i) { if (row.id) rowOf[row.id] = i; });
      traces.push({el: el, rows: rows, rowOf: rowOf, data: data, hay: data.spans.map(haystack)});
      rows.forEach(function (row, i) {
        var btn = row.querySelector('.tw-tog');
        if (btn) btn.addEventListener('click', function (e) {
          e.stopPropagation();
          setCollapsed(traces[n], i, !row.classList.contains('tw-collapsed'));
        });
        row.addEventListener('click', function () { select(row); });
      });
      el.querySelector('h2').addEventListener('click', function () {
        el.classList.toggle('tw-folded');
      });
    });
    var box = document.getElementById('tw-search');
    box.addEventListener('input', function () { search(box.value); });
    box.addEventListener('keydown', function (e) {
      if (e.key === 'Enter') { e.preventDefault(); step(e.shiftKey ? -1 : 1); }
      if (e.key === 'Escape') { box.value = ''; search(''); }
    });
    document.addEventListener('keydown', function (e) {
      if (e.key === '/' && document.activeElement !== box) { e.preventDefault(); box.focus(); }
    });
    var cp = document.getElementById('tw-cp');
    cp.addEventListener('change', function () {
      document.body.classList.toggle('tw-no-cp', !cp.checked);
    });
    var toc = document.querySelector('nav.tw-toc');
    if (toc) document.getElementById('tw-traces').insertBefore(toc, document.getElementById('tw-traces').firstChild);
    search('');
    var first = document.querySelector('.tw-row[data-k]');
    if (first) select(first);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
