"""helpers.lib.encoder_numpy: with TinyBert's weights, TinyBert's vectors and masked-LM loss; a
block's backward is finite differences' and PyTorch's Pre-LN layer's; bad input named."""
import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib.bert import BertConfig, TinyBert, masked_lm_loss
from helpers.lib.encoder_numpy import EncoderBlock, NumpyEncoder
from helpers.lib.gradcheck import check_layer
from tests.props import budget, covers, dims, raises_naming


def _tiny_bert(heads: int, n_layers: int, seed: int) -> TinyBert:
    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=11, dim=4 * heads, n_layers=n_layers, n_heads=heads, ff_dim=6,
                     max_len=6)
    model = TinyBert(cfg, pad_id=0).double().eval()
    with torch.no_grad():
        for p in model.parameters():          # away from the identity LayerNorms and zero biases
            p.normal_(0.0, 0.3)
    return model


@covers("encoder_numpy.NumpyEncoder")
@budget(0.5)
@given(st.data())
def test_the_numpy_encoder_is_tiny_bert_for_every_size_and_padding(data):
    heads, n_layers = data.draw(st.sampled_from([1, 2])), data.draw(dims(1, 2))
    seed = data.draw(st.integers(0, 5))
    model = _tiny_bert(heads, n_layers, seed)
    enc = NumpyEncoder.from_torch(model)
    B, L = data.draw(dims(1, 3)), data.draw(dims(1, 6))
    ids = np.array(data.draw(st.lists(st.integers(1, 10), min_size=B * L, max_size=B * L)))
    ids = ids.reshape(B, L)
    lengths = [data.draw(st.integers(1, L)) for _ in range(B)]
    mask = np.arange(L)[None] < np.array(lengths)[:, None]
    ids[~mask] = 0
    segments = np.array(data.draw(st.lists(st.integers(0, 1), min_size=B * L, max_size=B * L)))
    segments = segments.reshape(B, L)
    t_ids, t_mask = torch.as_tensor(ids), torch.as_tensor(mask)
    with torch.no_grad():
        theirs = model(t_ids, t_mask, torch.as_tensor(segments)).numpy()
    ours = enc.forward(ids, mask, segments)
    np.testing.assert_allclose(ours[mask], theirs[mask], atol=1e-10)   # padding is never read
    labels = np.where(mask & (np.arange(L)[None] % 2 == 0), ids, -100)
    with torch.no_grad():
        loss = masked_lm_loss(model, t_ids, torch.as_tensor(labels), t_mask).item()
    # torch's loss is float32
    np.testing.assert_allclose(enc.masked_lm_loss(ids, labels, mask), loss, rtol=1e-6)
    raises_naming(lambda: enc.forward(np.full((1, 7), 1)), "ids", ValueError)   # over max_len
    raises_naming(lambda: enc.forward(ids + 11), "ids", ValueError)
    raises_naming(lambda: enc.masked_lm_loss(ids, np.full_like(ids, -100), mask), "labels",
                  ValueError)
    raises_naming(lambda: NumpyEncoder.from_torch(torch.nn.Linear(2, 2)), "TinyBert", ValueError)


@covers("encoder_numpy.EncoderBlock")
@budget(0.2)
@given(dims(1, 2), dims(2, 4), st.integers(0, 5))
def test_an_encoder_block_is_torch_s_pre_ln_layer_and_passes_finite_differences(B, T_, seed):
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    layer = torch.nn.TransformerEncoderLayer(8, 2, 12, 0.0, activation="gelu", batch_first=True,
                                             norm_first=True).double()
    with torch.no_grad():
        for p in layer.parameters():
            p.normal_(0.0, 0.3)
    block = EncoderBlock(8, 2, 12, rng).load_torch(layer)
    x = rng.standard_normal((B, T_, 8))
    keep = np.ones((B, T_), bool)
    keep[:, -1] = T_ == 1 or bool(seed % 2)                     # sometimes the last key is padding
    tx = torch.tensor(x, requires_grad=True)
    ty = layer(tx, src_key_padding_mask=torch.as_tensor(~keep))
    dout = rng.standard_normal(x.shape)
    ty.backward(torch.tensor(dout))
    np.testing.assert_allclose(block.forward(x, key_padding=keep), ty.detach().numpy(), atol=1e-10)
    np.testing.assert_allclose(block.backward(dout), tx.grad.numpy(), atol=1e-10)
    fresh = EncoderBlock(8, 2, 12, rng)
    for p in fresh.params:
        p += 0.1 * rng.standard_normal(p.shape)
    report = check_layer(fresh, x, rng=rng)
    # the key bias shifts a whole row of scores, which the softmax ignores: its gradient is 0
    b_K = "param[5]"
    assert np.abs(fresh.grads[5]).max() < 1e-10
    assert max(e for name, e in report.errors.items() if name != b_K) < 1e-6, report


@covers("encoder_numpy.NumpyEncoder.masked_lm_step")
@budget(0.5)
@given(st.sampled_from([1, 2]), dims(1, 2), st.integers(0, 5))
def test_the_masked_lm_step_gives_torch_s_gradients(heads, n_layers, seed):
    model = _tiny_bert(heads, n_layers, seed)
    enc = NumpyEncoder.from_torch(model)
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, 11, (3, 6))
    ids[0, 4:] = 0
    ids[1, 0] = ids[1, 1]                                        # an id read twice: its rows add up
    mask = ids != 0
    labels = np.where(mask & (rng.random(ids.shape) < 0.5), ids, -100)
    labels[2, 3] = ids[2, 3]
    segments = np.zeros_like(ids)
    loss = masked_lm_loss(model, torch.as_tensor(ids), torch.as_tensor(labels),
                          torch.as_tensor(mask))
    loss.backward()
    ours = enc.masked_lm_step(ids, labels, mask)
    np.testing.assert_allclose(ours, loss.item(), rtol=1e-6)
    pairs = [(enc.grads[0], model.tok_emb.weight.grad), (enc.grads[1], model.pos_emb.weight.grad),
             (enc.grads[-1], model.out_bias.grad),
             (enc.blocks[0].ff.grads[0], model.encoder.layers[0].linear1.weight.grad.T),
             (enc.blocks[0].attn.grads[6],
              model.encoder.layers[0].self_attn.out_proj.weight.grad.T)]
    for mine, theirs in pairs:
        np.testing.assert_allclose(mine, theirs.numpy(), rtol=1e-5, atol=1e-7)   # torch: float32
    assert np.all(enc.grads[2][1] == 0) and segments.max() == 0   # sentence B's row never read
