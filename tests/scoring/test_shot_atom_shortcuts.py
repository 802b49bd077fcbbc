"""The shortcuts of ``tennis.shot_atoms`` (a v1 prefix, identical v2 token lists)
give what the full order-preserving DP gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import tennis

token = st.tuples(st.sampled_from([None, "serve", "forehand"]), st.sampled_from([None, "wide", "middle"]))
tokens = st.lists(token, max_size=7)


@settings(max_examples=400, deadline=None)
@given(tokens, tokens, st.integers(min_value=0, max_value=7), st.booleans(), st.sampled_from(["v1", "v2"]))
def test_shot_atoms_equal_the_full_dp(predicted, other, cut, identical, version):
    reference = list(predicted) if identical else other[:cut] if cut else other
    if identical and cut % 2:
        reference = predicted[:cut]  # a prefix
    full = tennis.shot_atom_table(predicted, reference, version)[-1][-1]
    assert tennis.shot_atoms(predicted, reference, version) == full
    assert (
        tennis.shot_atoms(reference, predicted, version)
        == tennis.shot_atom_table(reference, predicted, version)[-1][-1]
    )
