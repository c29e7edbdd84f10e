"""What ``make models`` runs: the shipped models' recipes, the one training loop, and the
searches and studies behind the settings. Imports :mod:`helpers`; nothing in ``helpers`` imports
this package. ``python -m training --list`` lists the models."""
