-- run_configs: each run's effective config (the config file with the run's overrides applied, secrets redacted, as
-- YAML), its path and fingerprint (config_fp, as in metric_history).
select * from {{ source('run_configs') }}
