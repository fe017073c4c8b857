"""Where a node's plan lives: the config key the planner writes it under, and the version of its shape.

Apart from planner.py, so the modules that read plans (fingerprints, explain) import without dbt.
"""

PLAN_KEY = "lakeplan_plan"
PLAN_VERSION = 1
