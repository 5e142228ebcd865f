import pytest
import torch

torch.set_num_threads(1)  # the tests share small machines; one thread is the fastest there


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    from fulcrum_worker.tiny import make_tiny_model

    directory = tmp_path_factory.mktemp("tiny")
    make_tiny_model(directory)
    return directory


@pytest.fixture(scope="session")
def tokenizer(tiny_model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model_dir)
