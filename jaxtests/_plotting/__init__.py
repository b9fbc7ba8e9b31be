"""All of jaxtests' figures, one kind of figure per module (matplotlib, imported at first draw).

Re-exported by :mod:`jaxtests.plot` (the figures of the seeds) and :mod:`jaxtests.study`
(``studies``: the figures of the studies); ``_common`` holds the axes, panels and legends
they share. Every function draws on ``ax`` when given, else on a new figure, and returns
the figure; nothing is shown or saved here.
"""
