"""Looking at what a fault touched: the standalone HTML view and the export to another store.

    palette.py    the colours of kinds and dispositions (shared with browser/provrepair.grass)
    graph.py      the task's graph, a run's dispositions and why → plain data for the page
    layout.py     preset positions by trace order (x) and kind (y)
    page.py       one self-contained HTML file (template + vendored cytoscape.js + data)
    target.py     open the store an export writes to (Neo4j or FalkorDB URI)
    export.py     copy a task with its runs and repair-written nodes to that store
    commands.py   the `view` and `export` click commands
"""
