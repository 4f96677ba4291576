/* Ours, not a peer's: how a peer benchmark's one box per rank becomes a haloswap decomposition.
 * tools/check-peer-bench copies this file beside our cartex runtime and our Comb method.
 * When the boxes tile the domain as a process grid (cuts on each axis, one rank per cell of
 * the grid: cartex's and Comb's own decompositions), a Cartesian decomposition, as a haloswap
 * user with a grid creates it (hs_decomp_create with the grid's per-axis ranges), on a
 * communicator whose rank order is the grid's: the core's axis-by-axis exchange (staged=1,
 * auto's staged candidates) needs a grid. Any other layout, or boxes_only: the boxes as they
 * are (hs_decomp_create_boxes). The fields and the halo bits are the same either way. */
#pragma once

#include <algorithm>
#include <cstdio>
#include <vector>

#include <haloswap.h>
#include <mpi.h>

/* grid_procs (3 ints) gets the process grid, or zeros for boxes. */
inline int hs_grid_decomp(MPI_Comm comm, const int global[3], const int periodic[3],
                          const int lo[3], const int hi[3], bool boxes_only, hs_decomp* out,
                          int grid_procs[3])
{
    int size = 0;
    MPI_Comm_size(comm, &size);
    int mine[6] = {lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]};
    std::vector<int> all(6 * static_cast<size_t>(size));
    MPI_Allgather(mine, 6, MPI_INT, all.data(), 6, MPI_INT, comm);
    /* Every rank tests the same gathered boxes, so every rank reaches the same verdict. */
    std::vector<int> cuts[3], width[3];
    bool grid = !boxes_only;
    for (int a = 0; a < 3 && grid; ++a)
    {
        for (int r = 0; r < size; ++r) cuts[a].push_back(all[6 * r + a]);
        std::sort(cuts[a].begin(), cuts[a].end());
        cuts[a].erase(std::unique(cuts[a].begin(), cuts[a].end()), cuts[a].end());
        cuts[a].push_back(global[a]);
        grid = cuts[a].front() == 0;
        for (size_t k = 0; k + 1 < cuts[a].size(); ++k) width[a].push_back(cuts[a][k + 1] - cuts[a][k]);
    }
    std::vector<int> key(static_cast<size_t>(size)), seen;
    for (int r = 0; r < size && grid; ++r)
    {
        int c[3];
        for (int a = 0; a < 3 && grid; ++a)
        {
            c[a] = static_cast<int>(std::lower_bound(cuts[a].begin(), cuts[a].end(), all[6 * r + a]) -
                                    cuts[a].begin());
            grid = all[6 * r + 3 + a] == cuts[a][c[a] + 1]; /* the box spans exactly one cell */
        }
        /* hs_decomp_create's rank order (axis order x, y, z): z varies fastest */
        if (grid) key[r] = (c[0] * static_cast<int>(width[1].size()) + c[1]) * static_cast<int>(width[2].size()) + c[2];
    }
    if (grid)
    {
        seen = key;
        std::sort(seen.begin(), seen.end());
        grid = width[0].size() * width[1].size() * width[2].size() == static_cast<size_t>(size) &&
               std::adjacent_find(seen.begin(), seen.end()) == seen.end();
    }
    for (int a = 0; a < 3; ++a) grid_procs[a] = grid ? static_cast<int>(width[a].size()) : 0;
    if (!grid) return hs_decomp_create_boxes(comm, 3, global, periodic, lo, hi, out);

    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm ordered;
    MPI_Comm_split(comm, 0, key[rank], &ordered);
    hs_decomp_desc desc;
    hs_decomp_desc_init(&desc);
    desc.ndims = 3;
    for (int a = 0; a < 3; ++a)
    {
        desc.global[a] = global[a];
        desc.procs[a] = grid_procs[a];
        desc.periodic[a] = periodic[a];
        desc.ranges[a] = width[a].data();
    }
    int rc = hs_decomp_create(ordered, &desc, out);
    MPI_Comm_free(&ordered); /* the decomposition holds its own Cartesian communicator */
    for (int a = 0; a < 3 && rc == HS_OK; ++a)
        if (hs_decomp_global_offset(*out, a) != lo[a] || hs_decomp_local_extent(*out, a) != hi[a] - lo[a])
        {
            std::fprintf(stderr, "hs_grid_decomp: rank %d's grid cell on axis %d starts at %d, its "
                         "box at %d\n", rank, a, hs_decomp_global_offset(*out, a), lo[a]);
            MPI_Abort(comm, 1);
        }
    return rc;
}
