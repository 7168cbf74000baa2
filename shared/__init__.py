"""Names that the Pulumi program (infra/) and the function (function/) must agree on."""
