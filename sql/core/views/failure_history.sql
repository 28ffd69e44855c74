-- failure_history: every failed attempt at a cell (backend errors), resolved or not.
select * from {{ source('failures') }}
