"""The shortcut of ``tennis.shot_atoms`` (one token list a prefix of the other, v1 and v2)
gives what the full order-preserving DP gives."""

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


@settings(max_examples=600, deadline=None)
@given(tokens.filter(bool), tokens, st.booleans(), st.sampled_from(["v1", "v2"]))
def test_a_prefix_scores_as_the_full_dp(shorter, tail, predicted_is_shorter, version):
    """One list a prefix of the other: v2 earns every present field when the fields of
    the shorter list can all be earned with token 0 paired past token 0, else all but
    token 0's stroke (both outcomes occur among the examples)."""
    longer = shorter + tail
    predicted, reference = (shorter, longer) if predicted_is_shorter else (longer, shorter)
    full = tennis.shot_atom_table(predicted, reference, version)[-1][-1]
    assert tennis.shot_atoms(predicted, reference, version) == full


def test_the_v2_prefix_cases_by_hand():
    serve_wide, fh_wide, fh_mid = ("serve", "wide"), ("forehand", "wide"), ("forehand", "middle")
    # token 0 can pair with the later copy of itself: every field earned
    assert tennis.shot_atoms([serve_wide], [serve_wide, serve_wide], "v2") == 2
    # no later copy: token 0's stroke is lost
    assert tennis.shot_atoms([serve_wide], [serve_wide, fh_wide], "v2") == 1
    # the later copy exists but the rest of the list then no longer fits
    assert tennis.shot_atoms([serve_wide, fh_mid], [serve_wide, serve_wide, fh_wide], "v2") == 3
    assert tennis.shot_atoms([serve_wide, fh_mid], [serve_wide, fh_mid, serve_wide, fh_mid], "v2") == 4
    # a token without fields may stay unpaired
    assert tennis.shot_atoms([serve_wide, (None, None)], [serve_wide, (None, None), serve_wide], "v2") == 2
    for predicted, reference in (
        ([serve_wide], [serve_wide, serve_wide]),
        ([serve_wide, fh_mid], [serve_wide, serve_wide, fh_wide]),
        ([serve_wide, (None, None)], [serve_wide, (None, None), serve_wide]),
    ):
        expected = tennis.shot_atom_table(predicted, reference, "v2")[-1][-1]
        assert tennis.shot_atoms(predicted, reference, "v2") == expected
