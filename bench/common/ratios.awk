# ratios.awk: functions the comparison scripts' awk programs share (bench/tcp-vs-mpi.sh,
# bench/shm-vs-mpi.sh, bench/ofi-vs-mpi.sh; prepended to each program). The noise functions'
# data: v[KIND, ROUND, SIZE, METRIC], the variable rounds, and for noise_line the sizes
# order[1..nsizes]. With want set ("near" or "far"), only the rounds r with rcls[r] == want
# count (rounds of one placement of the two vCPUs; bench/shm-vs-mpi.sh).

# The median of a[1..n] ("" when n is 0).
function median(a, n,    i, j, t) {
    if (n == 0) return ""
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}

# Whether round r counts (want unset, or r of the wanted placement).
function counted(r) { return want == "" || rcls[r] == want }

# The machine's noise on one comparison: kind k against itself in adjacent counted rounds, the
# median factor between two of its runs (1.00: none). A ratio that misses its goal by less is
# within what the same program differs from itself here.
function noise(k, m, s,    r, p, n, a, x) {
    n = p = 0
    for (r = 1; r <= rounds; r++) {
        if (!counted(r) || !((k, r, s, m) in v) || v[k, r, s, m] <= 0) continue
        if (p) {
            x = v[k, p, s, m] / v[k, r, s, m]
            a[++n] = x < 1 ? 1 / x : x
        }
        p = r
    }
    return median(a, n)
}

# Whether a csn/MPI ratio x of metric m at size s that misses its goal does so by less than
# Open MPI's own noise there. lower: the goal is x <= goal (latency), else x >= goal.
function in_noise(s, x, m, lower, goal,    z) {
    z = noise("mpi", m, s)
    return z != "" && (lower ? x <= goal * z : x >= goal / z)
}

# A missed goal, for a list: " SIZE", or " SIZE~" (and tilde set) when in_noise.
function miss(s, x, m, lower, goal) {
    if (!in_noise(s, x, m, lower, goal)) return " " s
    tilde = 1
    return " " s "~"
}

# The noise line: per size, the noise of Open MPI's latency, bandwidth and both ways.
function noise_line(    i, s) {
    if (rounds < 2) return
    printf "# noise: Open MPI against itself in adjacent rounds, median factor (lat bw bibw):"
    for (i = 1; i <= nsizes; i++) {
        s = order[i]
        printf " %d %s %s %s;", s, noise_fmt(noise("mpi", "lat", s)), noise_fmt(noise("mpi", "bw", s)), noise_fmt(noise("mpi", "bibw", s))
    }
    printf "\n"
}
function noise_fmt(x) { return x == "" ? "-" : sprintf("%.2f", x) }
