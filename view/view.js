/* provrepair view: draws the embedded graph with cytoscape.js. Up to LAYERED_LIMIT nodes it
   is laid out in layers along the dependencies (cytoscape-dagre, node boxes sized with their
   labels, so no two labels overlap); bigger graphs keep the preset positions from Python
   (view/layout.py), which cost the browser nothing. When the whole graph cannot be read at
   once, the page opens on the contamination region (the faults and every node a run marked
   beyond "preserved") at a readable zoom, the rest dimmed; "Whole graph" shows everything.
   Everything the canvas draws is mirrored in the DOM: #graph[data-node-count], and one
   legend entry per colour with the number of drawn nodes whose fill is that colour (read
   back from cytoscape's computed style, not from the data). */
(function () {
  'use strict';
  var started = performance.now();
  var data = JSON.parse(document.getElementById('provrepair-data').textContent);
  var graphEl = document.getElementById('graph');
  var BIG = data.nodes.length > 1500;
  var LAYERED_LIMIT = 1000;  /* above: the preset positions from Python */
  var LAYOUT_SPAN = 12;
  var LAYERED = data.nodes.length <= LAYERED_LIMIT;
  var FADED_OPACITY = 0.35;
  var CONTEXT_OPACITY = 0.2;
  /* labels are 10 px and drawn from 7 px on screen (min-zoomed-font-size) */
  var READABLE_ZOOM = 0.8;
  /* the contamination region: dispositions a fault's reach gives (not preserved, not a kind) */
  var REGION = {faulty: 1, quarantined: 1, affected: 1, supported: 1, invalidated: 1,
                replayed: 1, suspicious: 1, regenerated: 1};
  var byId = {};

  function elements() {
    var index = {}, out = [];
    data.nodes.forEach(function (n, i) {
      index[n.id] = 'n' + i;
      byId[n.id] = 'n' + i;
      var classes = [n.kind, n.step_type || '', n.phase === 'after' ? 'after' : '',
                     n.replaced ? 'replaced' : ''].join(' ');
      /* a namespace page (view/namespace.py): each conversation is a group, listed first */
      var extra = n.parent !== undefined ? {parent: index[n.parent]} : {};
      out.push({group: 'nodes', data: Object.assign({}, n, {id: 'n' + i, nid: n.label || n.id}, extra),
                position: {x: n.x, y: n.y}, classes: classes});
    });
    data.edges.forEach(function (e, i) {
      out.push({group: 'edges', classes: e.label.toLowerCase() + (e.phase === 'after' ? ' after' : ''),
                data: {id: 'e' + i, source: index[e.src], target: index[e.dst], label: e.label,
                       sufficient: e.sufficient === true}});
    });
    return out;
  }

  function styles() {
    var base = [
      {selector: 'node', style: {
        'width': 30, 'height': 30, 'border-width': 2, 'label': 'data(nid)', 'font-size': 10,
        'text-valign': 'bottom', 'text-margin-y': 3, 'color': '#333',
        'min-zoomed-font-size': 7, 'text-max-width': 80, 'text-wrap': 'ellipsis'}},
      {selector: 'node.user_input', style: {'shape': 'round-rectangle', 'width': 30}},
      {selector: 'node.memory', style: {'shape': 'barrel', 'width': 30}},
      {selector: 'node.final_answer', style: {'shape': 'round-diamond', 'width': 34, 'height': 34}}
    ];
    var colours = data.palette.map(function (p) {
      return {selector: 'node[disp = "' + p.key + '"]',
              style: {'background-color': p.color, 'border-color': p.border}};
    });
    var rest = [
      {selector: data.out_of_retrieval.map(function (s) {  // provenance/state/memory.py
        return 'node[status = "' + s + '"]';
      }).join(', '), style: {'border-style': 'dashed', 'border-width': 3}},
      {selector: 'edge', style: {
        'width': 1.2, 'line-color': '#9AA1AC', 'opacity': 0.85,
        'curve-style': BIG ? 'haystack' : 'bezier',
        'target-arrow-shape': BIG ? 'none' : 'triangle', 'target-arrow-color': '#9AA1AC',
        'arrow-scale': 0.7}},
      {selector: 'edge.chain', style: {'line-style': 'dashed', 'line-color': '#D5D5D5',
                                       'target-arrow-color': '#D5D5D5'}},
      {selector: 'edge[?sufficient]', style: {'width': 2.6, 'line-color': '#555',
                                              'target-arrow-color': '#555'}},
      {selector: 'edge.replays', style: {'width': 3, 'line-style': 'dashed', 'line-color': '#17BECF',
                                         'target-arrow-color': '#17BECF'}},
      {selector: 'node.conversation', style: {'shape': 'round-rectangle', 'background-opacity': 0.06,
                                              'border-color': '#888', 'text-valign': 'top'}},
      {selector: 'node[?answer_affected]', style: {'border-color': '#D62728', 'border-width': 3}},
      {selector: 'edge.shared_record', style: {'width': 3.5, 'line-style': 'dashed',
                                               'line-color': '#D62728', 'target-arrow-color': '#D62728'}},
      {selector: '.faded', style: {'opacity': FADED_OPACITY}},
      {selector: '.context', style: {'opacity': CONTEXT_OPACITY}},
      {selector: 'node:selected', style: {'border-width': 5, 'border-color': '#000'}}
    ];
    var big = !BIG ? [] : [  /* still visible as dots when the whole graph is on screen */
      {selector: 'node', style: {'width': 70, 'height': 70}},
      {selector: 'edge', style: {'opacity': 0.3}}
    ];
    return base.concat(colours, rest, big);
  }

  var cy = cytoscape({
    container: graphEl, elements: elements(), style: styles(), layout: {name: 'preset'},
    minZoom: 0.005, maxZoom: 4, boxSelectionEnabled: false,
    textureOnViewport: BIG, hideEdgesOnViewport: BIG, pixelRatio: BIG ? 1 : 'auto'
  });
  /* Layers along the dependencies (CHAIN only orders steps: left out). Every node is laid
     out, the after-repair ones included, so positions never jump between the phases. An
     edge spanning more than LAYOUT_SPAN columns of the trace is drawn but does not shape the
     layers: dagre pays for every rank an edge crosses (a dummy node each). */
  function layOut() {
    if (LAYERED) {
      var shaping = cy.edges().not('.chain').filter(function (e) {
        return Math.abs(e.source().data('order') - e.target().data('order')) <= LAYOUT_SPAN;
      });
      cy.nodes().union(shaping).layout({
        name: 'dagre', rankDir: 'LR', nodeDimensionsIncludeLabels: true, nodeSep: 6,
        rankSep: 18, edgeSep: 4, fit: false, animate: false
      }).run();
    }
    graphEl.dataset.layout = LAYERED ? 'layered' : 'preset';
  }
  var afterOnly = cy.elements('.after');
  var runRepaired = !!(data.run && data.run.repaired);
  var phase = 'before';

  function setPhase(next) {
    phase = next === 'after' && runRepaired ? 'after' : 'before';
    cy.batch(function () {
      if (phase === 'after') { afterOnly.restore(); } else { afterOnly.remove(); }
      cy.nodes().forEach(function (n) {
        n.data('status', phase === 'after' ? n.data('status_after') : n.data('status_before'));
      });
      cy.nodes('.replaced').toggleClass('faded', phase === 'after');
    });
    ['before', 'after'].forEach(function (p) {
      document.getElementById('phase-' + p).setAttribute('aria-pressed', String(p === phase));
    });
    graphEl.dataset.phase = phase;
    report();
  }

  function hex(color) {
    var m = /rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(color || '');
    if (!m) { return String(color || '').toLowerCase(); }
    return '#' + [m[1], m[2], m[3]].map(function (v) {
      return ('0' + Number(v).toString(16)).slice(-2);
    }).join('');
  }

  function drawnColours() {
    var counts = {};
    cy.nodes().forEach(function (n) {
      var c = hex(n.style('background-color'));
      counts[c] = (counts[c] || 0) + 1;
    });
    return counts;
  }

  function buildLegend() {
    var list = document.getElementById('legend'), group = null;
    data.palette.forEach(function (p) {
      if (p.group !== group) {
        group = p.group;
        var head = document.createElement('li');
        head.className = 'legend-group';
        head.textContent = group === 'kind' ? 'Kinds (not marked by the run)' : 'Dispositions';
        list.appendChild(head);
      }
      var li = document.createElement('li');
      li.className = 'legend-entry';
      li.dataset.key = p.key;
      li.dataset.color = p.color.toLowerCase();
      li.dataset.count = '0';
      var sw = document.createElement('span');
      sw.className = 'swatch';
      sw.style.background = p.color;
      sw.style.borderColor = p.border;
      var name = document.createElement('span');
      name.className = 'name';
      name.textContent = p.legend;
      var count = document.createElement('span');
      count.className = 'count';
      li.append(sw, name, count);
      list.appendChild(li);
    });
  }

  function report() {
    var counts = drawnColours();
    document.querySelectorAll('.legend-entry').forEach(function (li) {
      var n = counts[li.dataset.color] || 0;
      li.dataset.count = String(n);
      li.querySelector('.count').textContent = String(n);
      li.classList.toggle('empty', n === 0);
    });
    var nodes = cy.nodes().length, edges = cy.edges().length;
    graphEl.dataset.nodeCount = String(nodes);
    graphEl.dataset.edgeCount = String(edges);
    graphEl.setAttribute('aria-label', 'Provenance graph of task ' + data.task.task_id + ', ' +
      phase + ' the repair: ' + nodes + ' nodes, ' + edges + ' edges');
  }

  window.provrepairView = {cy: cy, setPhase: setPhase, select: select, data: data};

  function field(dl, name, value) {
    if (value === null || value === undefined || value === '') { return; }
    var dt = document.createElement('dt'), dd = document.createElement('dd');
    dt.textContent = name;
    dd.textContent = typeof value === 'object' ? JSON.stringify(value) : String(value);
    dl.append(dt, dd);
  }

  function renderDetails(d) {
    var box = document.getElementById('details');
    box.textContent = '';
    var title = document.createElement('h3');
    title.textContent = d.nid + ' (' + (d.step_type || d.kind) + ')';
    var content = document.createElement('div');
    content.className = 'content';
    content.textContent = d.content + (d.content_length > d.content.length
      ? ' … (' + d.content_length + ' characters in all)' : '');
    var dl = document.createElement('dl');
    var swatch = data.palette.filter(function (p) { return p.key === d.disp; })[0];
    field(dl, 'drawn as', swatch ? swatch.legend : d.disp);
    field(dl, 'run marks', d.marks.join(', '));
    field(dl, 'turn', d.turn);
    Object.keys(d.timestamps).forEach(function (k) { field(dl, k, d.timestamps[k]); });
    var shown = phase === 'after' ? d.status_after : d.status_before;
    field(dl, 'status', shown);
    if (runRepaired && phase === 'before' && d.status_after !== shown) {
      field(dl, 'status after repair', d.status_after);
    }
    Object.keys(d.details).forEach(function (k) { field(dl, k, d.details[k]); });
    field(dl, 'replaces', d.replaces);
    field(dl, 'written by run', d.origin_run);
    var why = document.createElement('ul');
    why.id = 'why';
    d.why.forEach(function (line) {
      var li = document.createElement('li');
      li.textContent = line;
      why.appendChild(li);
    });
    var whyTitle = document.createElement('h3');
    whyTitle.textContent = 'Why';
    box.append(title, content, dl, whyTitle, why);
    box.dataset.node = d.nid;
  }

  function select(nodeId, center) {
    var ele = byId[nodeId] ? cy.getElementById(byId[nodeId]) : null;
    if (!ele || ele.empty() || ele.removed()) { return false; }
    cy.nodes(':selected').unselect();
    ele.select();
    renderDetails(ele.data());
    if (center !== false) { cy.center(ele); }
    return true;
  }

  function parseHash() {
    var out = {};
    location.hash.replace(/^#/, '').split('&').forEach(function (part) {
      var kv = part.split('=');
      if (kv[0]) { out[decodeURIComponent(kv[0])] = decodeURIComponent(kv[1] || ''); }
    });
    return out;
  }

  function summary() {
    var run = data.run, text = 'domain ' + (data.task.domain || '-') + '; ';
    if (!run) { return text + 'no repair run recorded: nodes are coloured by kind.'; }
    text += 'run ' + run.run_id + ' (' + run.method + ', ' + run.status + ')';
    if (run.answer) { text += '; repaired answer: ' + run.answer; }
    return text;
  }

  function region() {
    return cy.nodes().filter(function (n) { return REGION[n.data('disp')] === 1; });
  }

  /* The region fitted, at a readable zoom at least (centred on the faults if it is wider
     than the screen); everything else dimmed. */
  function focusRegion(focus) {
    cy.batch(function () {
      cy.elements().addClass('context');
      focus.union(focus.edgesWith(focus)).removeClass('context');
    });
    cy.fit(focus, 30);
    if (cy.zoom() < READABLE_ZOOM) {
      var faults = focus.filter('[disp = "faulty"]');
      cy.zoom(READABLE_ZOOM);
      cy.center(faults.nonempty() ? faults : focus);
    }
  }

  var autoFit = true;   /* until the user pans or zooms, a resize re-fits the graph */
  var view = 'auto';    /* auto: the region when the whole graph is unreadable; all; region */
  cy.on('tapstart scrollzoom', function () { autoFit = false; });
  function refit() {
    cy.resize();
    if (!autoFit) { return; }
    var chosen = cy.nodes(':selected');
    cy.elements().removeClass('context');
    cy.fit(undefined, 30);
    var focus = region();
    var focused = focus.nonempty() &&
      (view === 'region' || (view === 'auto' && cy.zoom() < READABLE_ZOOM));
    if (focused) { focusRegion(focus); }
    graphEl.dataset.focus = focused ? 'region' : 'all';
    if (chosen.nonempty()) { cy.center(chosen); }
  }

  function wire() {
    var after = document.getElementById('phase-after');
    after.disabled = !runRepaired;
    if (!runRepaired) { after.title = 'this run wrote no repair (a plan, or no run)'; }
    ['before', 'after'].forEach(function (p) {
      document.getElementById('phase-' + p).addEventListener('click', function () { setPhase(p); });
    });
    [['fit', 'all'], ['focus', 'region']].forEach(function (pair) {
      document.getElementById(pair[0]).addEventListener('click', function () {
        autoFit = true;
        view = pair[1];
        cy.nodes(':selected').unselect();
        refit();
      });
    });
    document.getElementById('find').addEventListener('keydown', function (ev) {
      if (ev.key === 'Enter') {
        ev.target.setAttribute('aria-invalid', String(!select(ev.target.value.trim())));
      }
    });
    cy.on('tap', 'node', function (ev) { select(ev.target.data('nid'), false); });
  }

  function start() {
    layOut();
    document.getElementById('run-summary').textContent = summary();
    if (window.ResizeObserver) { new ResizeObserver(refit).observe(graphEl); }
    var initial = parseHash();
    setPhase(initial.phase || 'before');
    if (initial.node) { select(initial.node); }
    refit();
    graphEl.dataset.renderMs = String(Math.round(performance.now() - started));
    graphEl.dataset.ready = 'true';
  }

  buildLegend();
  wire();
  if (LAYERED && data.nodes.length > 100) {  /* say so before the layout holds the page */
    document.getElementById('run-summary').textContent =
      'laying out ' + data.nodes.length + ' nodes in layers…';
    requestAnimationFrame(function () { setTimeout(start, 0); });
  } else {
    start();
  }
})();
