"""The search half of the plugin, loaded only for a query set: the plan of cases, the
engine lanes, the fetch of one case (search, judge or match), fixtures, run reports and
``--resume`` (the cases an earlier run answered)."""
