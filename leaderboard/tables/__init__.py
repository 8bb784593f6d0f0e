"""The leaderboard's tables, computed from plain rows. Pure Python, no Django.

How averages are computed (also stated on the pages):
- A task's score for a model is the mean of its per-language (or per-pair) values over the languages
  it is averaged over (leaderboard.coverage): by default the selected languages that the model
  declares (all selected languages when it declares none), as the paper does; with "common languages
  only", the selected languages every shown model declares. Languages a model was not evaluated on
  are left out, never counted as zero; the table shows how many languages each mean covers. Cells
  outside a model's declared languages are shown, marked, and never averaged.
- For the cross-lingual tasks (T2, T3 cross) a pair counts when both its languages are selected
  ("both", the default) or when its query language is selected ("source").
- The interval of a re-run's mean is the engine's joint bootstrap interval (the same resamples of the
  shared items for every language). Published results carry a Wilson 95% interval per Recall@k (from
  the published value and the pool size); the interval of their mean, and of any mean whose joint
  interval cannot be had, is the mean of the per-language bounds, an upper bound on its width
  whatever the correlation between languages. Rank bands follow the overall score's interval.
- The overall score is the mean of the retrieval columns (T1, T2, T3 mono, T3 cross Recall@1) that
  have any result for the selection; a model missing one of them gets no overall score.

One module per kind of table: cells (a score cell, a run, the ranking rule's blocks), selection
(the languages and units a view covers), overview, per_language, pairs and runs.
"""
