/* foreach: the tensor groups of one launch */
template <int NT> struct tc_fe_group {
    unsigned long long ptr[NT];   /* each tensor's address */
    long long n;                  /* elements (never 0) */
    long long first;              /* the group's first block */
};
template <int NT, int CAP> struct tc_fe_table {
    const tc_fe_group<NT> *dev;   /* the groups, when more than CAP: else g */
    long long ngroups;
    tc_fe_group<NT> g[CAP];
};
/* this block's group: the last whose first block is <= blockIdx.x */
template <int NT> __device__ __forceinline__ long long tc_fe_index(const tc_fe_group<NT> *gs, long long ng) {
    long long lo = 0, hi = ng - 1;
    while (lo < hi) {
        const long long mid = (lo + hi + 1) >> 1;
        if (gs[mid].first <= (long long)blockIdx.x) lo = mid; else hi = mid - 1;
    }
    return lo;
}
template <int NT> __device__ __forceinline__ const tc_fe_group<NT> &
tc_fe_find(const tc_fe_group<NT> *gs, long long ng) {
    return gs[tc_fe_index<NT>(gs, ng)];
}
