"""Deterministic one-to-one matchings over sparse candidate lists.

Both functions take ``candidates``: for each left item (in order) the list of right
indices it may pair with, in order of preference. They return ``(left, right)``
pairs sorted by left index. Work is proportional to the number of candidate edges
(times the augmenting-path search for the bipartite matching), never to
``len(left) * len(right)``.
"""

from bisect import bisect_left
from collections import deque
from collections.abc import Sequence

from ._annotations import Any


def maximum_matching(candidates: Sequence[Sequence[int]], n_right: int) -> list[tuple[int, int]]:
    """A maximum-cardinality one-to-one matching (order does not matter).

    Left items are processed in order; each searches a shortest augmenting path by
    breadth-first search, visiting its candidates in the given order, so a left item
    takes its most preferred free candidate when it can.
    """
    match_right = [-1] * n_right
    match_left = [-1] * len(candidates)
    for root, first in enumerate(candidates):
        if not first:
            continue
        for right in first:  # the first level of the search: a free preferred candidate
            if match_right[right] < 0:
                match_right[right] = root
                match_left[root] = right
                break
        if match_left[root] >= 0:
            continue
        reached_from: dict[int, int] = {}
        queue = deque([root])
        free_right = -1
        while queue and free_right < 0:
            left = queue.popleft()
            for right in candidates[left]:
                if right in reached_from:
                    continue
                reached_from[right] = left
                if match_right[right] < 0:
                    free_right = right
                    break
                queue.append(match_right[right])
        right = free_right
        while right >= 0:
            left = reached_from[right]
            previous = match_left[left]
            match_left[left] = right
            match_right[right] = left
            right = previous if left != root else -1
    return [(left, right) for left, right in enumerate(match_left) if right >= 0]


def longest_ordered_matching(
    candidates: Sequence[Sequence[int]],
) -> list[tuple[int, int]]:
    """A longest order-preserving one-to-one matching (LCS over candidate edges).

    Hunt-Szymanski: ``thresholds[k]`` is the smallest right index that ends a chain
    of ``k + 1`` pairs. Runs in O((edges + items) log items).
    """
    thresholds: list[int] = []
    tails: list[tuple[int, int, Any]] = []  # (left, right, the chain's previous node or None)
    for left, rights in enumerate(candidates):
        for right in sorted(set(rights), reverse=True):
            k = bisect_left(thresholds, right)
            node = (left, right, tails[k - 1] if k else None)
            if k == len(thresholds):
                thresholds.append(right)
                tails.append(node)
            elif right < thresholds[k]:
                thresholds[k] = right
                tails[k] = node
    pairs: list[tuple[int, int]] = []
    link = tails[-1] if tails else None
    while link is not None:
        pairs.append((link[0], link[1]))
        link = link[2]
    pairs.reverse()
    return pairs
