"""Layer 5: splitting one NDRange across devices (Erdem et al. 2018).

``pruning``: each device's legal configurations and those legal on all of them (Tables 1-2).
"""
