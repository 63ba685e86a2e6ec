import json

import pytest

from reference.broker.checkpoint import (AckMsg, BatchAckMsg, PopCheckPoint, ack_offset_by_index, full_mask, get_bit,
                                         index_of_ack, set_bit)


def test_bits_follow_java_int_semantics():
    assert set_bit(0, 0) == 1
    assert set_bit(0, 31) == -(1 << 31)  # Java int sign bit
    assert set_bit(0, 32) == 1  # 1 << 32 == 1 << 0 in Java
    assert get_bit(set_bit(0, 5), 5) and not get_bit(set_bit(0, 5), 4)
    assert set_bit(set_bit(0, 3), 3, False) == 0
    assert full_mask(32) == -1


def test_index_of_ack_old_and_new_checkpoints():
    # old checkpoint: no diff list, contiguous [start, start + num)
    assert index_of_ack(10, 3, None, 12) == 2
    assert index_of_ack(10, 3, None, 13) == -1
    assert index_of_ack(10, 3, None, 9) == -1
    # new checkpoint: offsets with gaps (filtered messages)
    assert index_of_ack(10, 3, [0, 4, 7], 14) == 1
    assert index_of_ack(10, 3, [0, 4, 7], 12) == -1
    # (int) narrowing of the difference: 2^32 apart looks like diff 0
    assert index_of_ack(0, 1, [0], 1 << 32) == 0


def test_ack_offset_by_index():
    assert ack_offset_by_index(10, None, 2) == 12
    assert ack_offset_by_index(10, [0, 4, 7], 2) == 17
    with pytest.raises(IndexError):
        ack_offset_by_index(10, [0], 1)
    with pytest.raises(IndexError):
        ack_offset_by_index(10, [0, 1], -1)


def test_checkpoint_json_fastjson_form_and_round_trip():
    ck = PopCheckPoint(start_offset=5, pop_time=1000, invisible_time=3000, num=2, queue_id=1, topic="T", cid="G",
                       broker_name="b")
    ck.add_diff(0)
    ck.add_diff(3)
    text = ck.to_json()
    assert text == ('{"bm":0,"bn":"b","c":"G","d":[0,3],"it":3000,"n":2,"pt":1000,"q":1,'
                    '"reviveTime":4000,"ro":0,"so":5,"t":"T"}')
    back = PopCheckPoint.from_json(text)
    assert back == ck
    assert back.index_of_ack(8) == 1


def test_ack_json_profiles():
    ack = AckMsg(7, 5, "G", "T", 1, 1000, "b")
    assert json.loads(ack.to_json(False)) == {"ackOffset": 7, "brokerName": "b", "consumerGroup": "G",
                                              "popTime": 1000, "queueId": 1, "startOffset": 5, "topic": "T"}
    assert ack.to_json(True) == '{"ao":7,"bn":"b","c":"G","pt":1000,"q":1,"so":5,"t":"T"}'
    assert AckMsg.from_json(ack.to_json(True)) == ack == AckMsg.from_json(ack.to_json(False))
    assert ack.merge_key == "TG151000"
    batch = BatchAckMsg((7, 8), 5, "G", "T", 1, 1000)
    assert json.loads(batch.to_json())["aol"] == [7, 8]
    assert [a.ack_offset for a in batch.to_acks()] == [7, 8]
