/* tools/peer-bench/hs_grid_decomp.hpp, the peer benchmarks' decomposition: boxes that tile the
 * domain as a process grid, in any rank order, become a Cartesian decomposition whose every
 * rank holds its own box, and a staged swap over it fills every halo cell (corners included)
 * with the value from its global coordinates; other layouts, and boxes_only, stay boxes.
 * Any rank count. */
#include <cstdio>
#include <vector>

#include "hs_grid_decomp.hpp"

static const int G[3] = {13, 7, 5}, H = 1;
static int bad = 0;

static void expect(bool ok, const char* what, int rank)
{
    if (ok) return;
    std::printf("rank %d: %s\n", rank, what);
    ++bad;
}

static double value(int x, int y, int z)
{
    auto w = [](int i, int n) { return ((i % n) + n) % n; };
    return w(x, G[0]) + 100.0 * w(y, G[1]) + 10000.0 * w(z, G[2]);
}

/* Cut axis a into n parts, uneven where n does not divide it: part k is [cut(k), cut(k+1)). */
static int cut(int a, int k, int n) { return G[a] * k / n; }

/* One layout: rank's box, whether it is a grid, and (for a grid) the swap's check. */
static void layout(const char* name, const int lo[3], const int hi[3], bool want_grid, bool boxes_only, int rank)
{
    const int per[3] = {1, 1, 1};
    hs_decomp d = nullptr;
    int procs[3];
    char what[200];
    if (hs_grid_decomp(MPI_COMM_WORLD, G, per, lo, hi, boxes_only, &d, procs) != HS_OK)
    {
        std::snprintf(what, sizeof what, "%s: %s", name, hs_error_message());
        expect(false, what, rank);
        return;
    }
    std::snprintf(what, sizeof what, "%s: %s, want %s", name, procs[0] ? "a grid" : "boxes",
                  want_grid ? "a grid" : "boxes");
    expect((procs[0] != 0) == want_grid && hs_decomp_is_boxes(d) == (want_grid ? 0 : 1), what, rank);
    for (int a = 0; a < 3; ++a)
    {
        std::snprintf(what, sizeof what, "%s: axis %d: box from %d, %d cells; decomposition %d, %d", name, a,
                      lo[a], hi[a] - lo[a], hs_decomp_global_offset(d, a), hs_decomp_local_extent(d, a));
        expect(hs_decomp_global_offset(d, a) == lo[a] && hs_decomp_local_extent(d, a) == hi[a] - lo[a], what, rank);
    }
    /* x fastest; halo H on every axis, swapped staged where the decomposition is a grid */
    int n[3], e[3];
    for (int a = 0; a < 3; ++a) n[a] = hi[a] - lo[a], e[a] = n[a] + 2 * H;
    std::vector<double> f(static_cast<size_t>(e[0]) * e[1] * e[2], -1.0);
    auto at = [&](int i, int j, int k) -> double& { return f[(static_cast<size_t>(k + H) * e[1] + (j + H)) * e[0] + (i + H)]; };
    for (int k = 0; k < n[2]; ++k)
        for (int j = 0; j < n[1]; ++j)
            for (int i = 0; i < n[0]; ++i) at(i, j, k) = value(lo[0] + i, lo[1] + j, lo[2] + k);
    hs_field fl = hs_field_array(HS_FLOAT64, f.data(), HS_LAYOUT_XFAST, H);
    fl.halo[2] = H;
    hs_plan_desc pd;
    hs_plan_desc_init(&pd);
    for (int a = 0; a < 3; ++a) pd.depth[a] = H;
    pd.stencil = HS_STENCIL_BOX;
    pd.nfields = 1;
    pd.fields = &fl;
    pd.transport_name = want_grid ? "p2p:staged=1" : "p2p";
    hs_plan p = nullptr;
    int rc = hs_plan_create(d, &pd, &p);
    if (rc == HS_OK) rc = hs_swap(p, nullptr);
    std::snprintf(what, sizeof what, "%s: plan or swap: %s", name, rc == HS_OK ? "" : hs_error_message());
    expect(rc == HS_OK, what, rank);
    long wrong = 0;
    for (int k = -H; rc == HS_OK && k < n[2] + H; ++k)
        for (int j = -H; j < n[1] + H; ++j)
            for (int i = -H; i < n[0] + H; ++i) wrong += at(i, j, k) != value(lo[0] + i, lo[1] + j, lo[2] + k);
    std::snprintf(what, sizeof what, "%s: %ld cells differ from their global value", name, wrong);
    expect(wrong == 0, what, rank);
    hs_plan_free(&p);
    hs_decomp_free(&d);
}

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* strips along x in rank order */
    int lo[3] = {cut(0, rank, size), 0, 0}, hi[3] = {cut(0, rank + 1, size), G[1], G[2]};
    layout("x strips", lo, hi, true, false, rank);
    layout("x strips, boxes_only", lo, hi, false, true, rank);
    /* a px x py grid with x varying fastest in rank order (cartex's hwcart order), and the
     * ranks reversed: neither is hs_decomp_create's own order */
    int px = size % 2 == 0 ? size / 2 : size, py = size / px;
    for (int rev = 0; rev < 2; ++rev)
    {
        int r = rev ? size - 1 - rank : rank, cx = r % px, cy = r / px;
        int l[3] = {cut(0, cx, px), cut(1, cy, py), 0}, h[3] = {cut(0, cx + 1, px), cut(1, cy + 1, py), G[2]};
        layout(rev ? "grid, ranks reversed" : "grid, x fastest", l, h, true, false, rank);
    }
    /* not a grid: from 3 ranks, the last strip split in y (two east neighbours) */
    if (size >= 3)
    {
        int s = size - 1, st = rank < s - 1 ? rank : s - 1, part = rank - st;
        int l[3] = {cut(0, st, s), st < s - 1 ? 0 : cut(1, part, 2), 0};
        int h[3] = {cut(0, st + 1, s), st < s - 1 ? G[1] : cut(1, part + 1, 2), G[2]};
        layout("strips, the last split", l, h, false, false, rank);
    }
    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) std::printf("test_grid_decomp: %d ranks, %d problems\n", size, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
