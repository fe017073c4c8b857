"""Reading Spark's executed physical plan: what really ran, the final plan under AQE."""

import re

EXCHANGE = re.compile(r"\bExchange (\w+)\((.*?)\)")


def executed_plan(spark, sql: str) -> str:
    """Runs the query and returns its executed plan; under AQE only the final plan."""
    frame = spark.sql(sql)
    frame.collect()
    plan = frame._jdf.queryExecution().executedPlan().toString()
    if "== Final Plan ==" in plan:
        plan = plan.split("== Final Plan ==", 1)[1].split("== Initial Plan ==", 1)[0]
    return plan


def exchanges(plan: str) -> list[tuple[str, str]]:
    """The plan's Exchange nodes as (partitioning, arguments), e.g. ("hashpartitioning", "k#12, 8")."""
    return EXCHANGE.findall(plan)
