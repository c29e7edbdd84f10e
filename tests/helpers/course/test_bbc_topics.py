"""helpers.course.bbc_topics: the BBC topic splits hold out no copy of a training article."""
import numpy as np

from helpers.course.bbc_topics import bbc_groups, bbc_topic_data, bbc_topic_task
from helpers.lib.text import tokenize


def test_the_splits_and_the_copies_left_out():
    groups = bbc_groups()
    data = bbc_topic_data(seed=0)
    assert len(groups) == len(data.docs) == 2225 and data.topics == sorted(data.topics)
    assert (len(data.train), len(data.valid), len(data.test)) == (1558, 299, 302)   # of 334, 333
    seen = set(groups[data.train])
    assert not any(groups[i] in seen for i in np.concatenate([data.valid, data.test]))
    docs, topics = bbc_topic_task()
    assert len(docs) == 2225 and docs[0] == tokenize(data.docs[0])
    assert [data.topics[i] for i in data.labels[:50]] == topics[:50]
