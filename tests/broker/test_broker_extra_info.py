import pytest

from reference.broker import extra_info as ei
from reference.broker.keys import build_ck_merge_key, build_lock_key, build_pop_retry_topic, parse_normal_topic


def test_build_and_parse_round_trip():
    h = ei.build_extra_info(5, 1000, 3000, 2, "%RETRY%G_T", "broker-a", 0, 7)
    assert h == "5 1000 3000 2 1 broker-a 0 7"
    p = ei.split(h)
    assert (ei.get_ck_queue_offset(p), ei.get_pop_time(p), ei.get_invisible_time(p), ei.get_revive_qid(p)) == (5, 1000, 3000, 2)
    assert ei.get_real_topic(p, "T", "G") == "%RETRY%G_T"
    assert (ei.get_broker_name(p), ei.get_queue_id(p), ei.get_queue_offset(p)) == ("broker-a", 0, 7)
    assert ei.build_extra_info(5, 1, 2, 3, "T", "b", 4) == "5 1 2 3 0 b 4"


@pytest.mark.parametrize("bad", ["", "x 1 2 3 0 b 0", "1 2", "1 2 3 99999999999 0 b 0", "1 2 3 0x1 0 b 0"])
def test_malformed_handles_raise_value_errors(bad):
    p = ei.split(bad)
    with pytest.raises(ei.ExtraInfoError):
        ei.get_ck_queue_offset(p), ei.get_pop_time(p), ei.get_invisible_time(p), ei.get_revive_qid(p), ei.get_broker_name(p)


def test_split_is_java_split():
    assert ei.split("a b  ") == ["a", "b"]
    assert ei.split("") == [""]
    assert ei.split("a  b") == ["a", "", "b"]
    with pytest.raises(ei.ExtraInfoError):
        ei.split(None)


def test_keys_concatenate_like_java():
    assert build_pop_retry_topic("T", "G") == "%RETRY%G_T"
    assert parse_normal_topic("%RETRY%G_T", "G") == "T"
    assert build_lock_key("T", "G", 3) == "T@G@3"
    # merge keys have no separators: distinct checkpoints can collide
    assert build_ck_merge_key("T", "G", 1, 23, 5) == build_ck_merge_key("T", "G", 12, 3, 5)
