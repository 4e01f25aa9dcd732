"""The match simulator: physics (``physics``), shot scripting and an automatic player, an overhead
camera renderer (``camera``, ``render``) and the clip maker that joins them into sample videos with
exact ground truth. :mod:`simulator.scene` is the contract between physics and renderer."""
