"""What each public page shows, assembled from QuerySets and the pure table/plot modules.

Every builder takes the request's query parameters and returns a `Page`: the template context plus
the page's tables in a plain form for the CSV/JSON downloads. Builders issue a fixed number of
queries whatever the number of models, and hold no rules of their own: averages, ranks and figures
come from leaderboard.tables, leaderboard.ranking and leaderboard.plots.

One module per kind of page: overview, tasks (retrieval and classification task pages),
crosslingual, compare, run and dataset; selection holds what they share (the selection a page
shows, the Page and ExportTable types, the filters kept in links). Callers import from the module
that builds the page they need.
"""
