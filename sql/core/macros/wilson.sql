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

-- clustered_wilson_low / clustered_wilson_high(k, n, syy, sym, smm, c): the Wilson interval of k / n when the n trials
-- come in c clusters whose trials are not independent (the two orders of one seed): Wilson's formula on the effective
-- number of trials n / deff (Kish), deff = the cluster-robust variance of the pooled share over the binomial one, at
-- least 1. syy, sym, smm: the sums over clusters of y², y·m and m² (y a cluster's successes, m its trials), so that
-- sum((y - p·m)²) = syy - 2p·sym + p²·smm with p = k / n (the robust variance sum((y - p·m)²) / n², without a
-- small-sample factor, so clusters of one trial give Wilson's own interval). One cluster: one effective trial. A
-- share of 0 or 1 has no binomial variance to compare with: deff 1.
create or replace macro clustered_deff(k, n, syy, sym, smm, c) as
    case
        when n <= 0 then 1.0
        when c < 2 then n::double
        when k <= 0 or k >= n then 1.0
        else greatest(1.0,
            (syy - 2.0 * (k / n) * sym + (k / n) * (k / n) * smm) / (n * n)
            / ((k / n) * (1.0 - k / n) / n))
    end;

create or replace macro clustered_wilson_low(k, n, syy, sym, smm, c) as
    wilson_low((k / nullif(n, 0)) * (n / clustered_deff(k, n, syy, sym, smm, c)),
               n / clustered_deff(k, n, syy, sym, smm, c));

create or replace macro clustered_wilson_high(k, n, syy, sym, smm, c) as
    wilson_high((k / nullif(n, 0)) * (n / clustered_deff(k, n, syy, sym, smm, c)),
                n / clustered_deff(k, n, syy, sym, smm, c));
