-- metric_changes: each run's night-over-night paired tests (dialogbench/history/noise.py): per series of the run with
-- units kept by its previous run on the board, tonight's number minus the previous night's on the units both have
-- (shared_value - shared_previous = shared_delta), its 95% paired-bootstrap interval (ci_low / ci_high) and p. The
-- `changes` view reads it: a change whose interval holds 0 is 'within noise'.
select * from {{ source('metric_changes') }}
