-- wilson_low(k, n) / wilson_high(k, n): the Wilson score 95% interval (z = 1.959964) of the share k / n, clamped to
-- [0, 1], rounded to 4 places, null when n = 0: (k + z²/2 ∓ z·sqrt(k(n − k)/n + z²/4)) / (n + z²).
create or replace macro wilson_low(k, n) as
    case when n > 0 then round(greatest(0.0,
        (k + 1.920729410347062 - 1.959963984540054 * sqrt(k * (n - k) / n + 0.960364705173531))
        / (n + 3.841458820694124)), 4) end;

create or replace macro wilson_high(k, n) as
    case when n > 0 then round(least(1.0,
        (k + 1.920729410347062 + 1.959963984540054 * sqrt(k * (n - k) / n + 0.960364705173531))
        / (n + 3.841458820694124)), 4) end;
