"""Looking at what a fault touched: the standalone HTML view and the export to another store.

    palette.py    the colours of kinds and dispositions (shared with browser/provrepair.grass)
    graph.py      the task's graph, a run's dispositions and why → plain data for the page
    layout.py     preset positions by trace order (x) and kind (y)
    page.py       one self-contained HTML file (template + vendored cytoscape.js + data)
    why.py        the rule of the plan behind each node's disposition
    export.py     copy a task with its runs and repair-written nodes to another store

Beside the engine (provenance/, cypher/, loaders/, repair/), which imports nothing from here;
commands/view.py loads it on first use.
"""
