"""A report's figures agree with each other: what a reader can add up on the page adds up, the same state gets the
same verdict in every section, and no sentence states what the page's own numbers contradict. Each case is one a
review of the rendered pages found wrong (session 4)."""

import html
import json
import re

import pytest
from django.utils import translation

from reports.estimates import current_catalog
from reports.forms import context_label
from reports.sizing.estimate import estimate, plan_memory
from reports.sizing.specs import Scenario
from reports.templatetags.fmt import ms, toks

pytestmark = pytest.mark.django_db

GIB = 2**30


def url(model, hardware, lang="en", query=""):
    return f"/{lang}/report/{model}/{hardware}/" + (f"?{query}" if query else "")


def text_of(client, path) -> str:
    response = client.get(path)
    assert response.status_code == 200, response.content[:300]
    # Template syntax never reaches the page: a "{# … #}" comment over two lines is text to Django.
    leaked = re.search(r".{0,60}(?:\{[#%]|[#%]\}).{0,60}", response.content.decode())
    assert leaked is None, leaked.group(0)
    html = re.sub(r"<script.*?</script>|<style.*?</style>|<svg.*?</svg>", "", response.content.decode(), flags=re.S)
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def gib_after(label: str, text: str) -> float:
    return float(re.search(re.escape(label) + r" ([+−-]?[\d.]+) GiB", text).group(1).replace("−", "-"))


def test_a_share_of_the_weights_in_system_ram_counts_what_the_gpu_holds(client):
    """Llama 3.3 70B with half its weights offloaded (offload=50) on an RTX 4090 read "42.68 GiB (45.82 GB) of 1 × 24
    GB (178%)" and "178% utilization" beside "Fits with safe headroom", and the verdict note "runs … in 42.68 GiB,
    leaving 1.88 GiB of headroom" on a 24 GB card. The share and the note count what the GPU holds."""
    _, catalog = current_catalog()
    scenario = Scenario(offload_pct=50)
    result = catalog.estimate(catalog.model("llama-3-3-70b-instruct"), catalog.hardware["rtx-4090"], scenario)
    fit = result.fit
    assert round(fit.utilization_pct) == 178 and fit.fits  # the contract's share: of the total
    held, ram = fit.gpu_demand_bytes / GIB, fit.system_ram_bytes / GIB
    share = round(fit.gpu_demand_bytes / (24 * GIB) * 100)
    assert share == 87 and round(held + ram, 2) == round(fit.required_bytes / GIB, 2)
    text = text_of(client, url("llama-3-3-70b-instruct", "rtx-4090", query="offload=50"))
    assert (f"Memory breakdown: {fit.required_bytes / GIB:.2f} GiB ({fit.required_bytes / 1e9:.2f} GB), {held:.2f} GiB "
            f"of it for 1 × 24 GiB ({share}%) and {ram:.2f} GiB in system RAM") in text
    assert f"{share}% of the GPU memory in use" in text and "178%" not in text
    offloaded = result.placement.offloaded_bytes / GIB
    assert f"Fits with safe headroom, with {offloaded:.2f} GiB of the model offloaded to system RAM" in text  # the banner says it
    assert (f"in {fit.required_bytes / GIB:.2f} GiB: the GPU holds {held:.2f} GiB and system RAM {ram:.2f} GiB, which "
            f"leaves {fit.headroom_bytes / GIB:.2f} GiB of headroom on the GPU") in text
    assert round(22.8 - held, 2) == pytest.approx(fit.headroom_bytes / GIB, abs=0.011)
    # Automatic offload keeps the seed's share of the total (what the GPU would need), beside "exceeds".
    glm = text_of(client, url("glm-5", "instinct-mi325x-256gb"))
    assert re.search(r"Memory breakdown: [\d.]+ GiB \([\d.]+ GB\) of 1 × 256 GiB \(16[45]%\)", glm)


def test_headroom_is_usable_minus_what_the_gpu_holds_and_the_page_says_so(client):
    """Gemma 3 27B at Q6_K on an RTX 4090 needs 23.78 GiB in all, more than the 22.8 GiB usable, yet runs tight:
    llama.cpp keeps the 1.08 GiB input embedding (and host buffers) in system RAM. The fit card says how much the
    GPU holds, so usable − on the GPU = headroom is visible."""
    _, catalog = current_catalog()
    plan = plan_memory(catalog.model("gemma-3-27b-it"), catalog.hardware["rtx-4090"], Scenario(quant="Q6_K"))
    assert plan.fit.required_bytes > plan.fit.usable_bytes_per_gpu > plan.fit.gpu_demand_bytes
    assert plan.fit.headroom_bytes == pytest.approx(plan.fit.usable_bytes_per_gpu - plan.fit.gpu_demand_bytes)
    assert plan.fit.system_ram_bytes == pytest.approx(plan.fit.required_bytes - plan.fit.gpu_demand_bytes)

    text = text_of(client, url("gemma-3-27b-it", "rtx-4090", query="quant=Q6_K"))
    on_gpu = float(re.search(r"([\d.]+) GiB on the GPU, ([\d.]+) GiB in system RAM", text).group(1))
    usable = float(re.search(r"Usable memory ([\d.]+) GiB", text).group(1))
    headroom = gib_after("Headroom", text)
    assert on_gpu == round(plan.fit.gpu_demand_bytes / GIB, 2)
    assert headroom == pytest.approx(usable - on_gpu, abs=0.06)  # usable is shown with one decimal
    assert "Tight headroom" in text


def test_context_table_marks_follow_the_verdict_at_that_context(client):
    """The table used "total ≤ usable" while the fit card uses the GPUs' demand: 64K was ✗ in the table of
    gemma-3-27b on an RTX 4090 and "Tight headroom" on the 64K page itself; and a tight fit read "✓ fits" where
    the page at that context says "Tight headroom": "!" marks it, with the word "tight"."""
    text = text_of(client, url("gemma-3-27b-it", "rtx-4090"))
    rows = dict(re.findall(r"\(([\d,]+)\) [\d.]+ GiB [\d.]+ GiB [\d.]+ GiB ([✓✗!])", text))
    assert rows["65,536"] == "!" and rows["131,072"] == "✗"
    for context, mark in rows.items():
        page = text_of(client, url("gemma-3-27b-it", "rtx-4090", query=f"context={context.replace(',', '')}"))
        assert ("Exceeds available GPU memory" in page) == (mark == "✗"), context
        assert ("Tight headroom" in page) == (mark == "!"), context


@pytest.mark.parametrize("lang, sentence", [
    ("en", "At every context, 60% of the weights stay in system RAM, as you chose."),
    ("de", "Bei jedem Kontext bleiben 60 % der Gewichte im System-RAM, wie von Ihnen gewählt."),
])
def test_context_table_keeps_an_offload_the_visitor_chose(client, lang, sentence):
    """With 60 % of Llama 3.3 70B's Q4_K_M weights in system RAM by choice, an RTX 4090 holds the rest up to 32K;
    the chart plotted every context without offload, ✗ everywhere beside a fit card that says it runs. Its "On the
    GPUs" at the page's own context is now what the fit card says the GPU holds."""
    _, catalog = current_catalog()
    model, hardware = catalog.model("llama-3-3-70b-instruct"), catalog.hardware["rtx-4090"]
    text = text_of(client, url("llama-3-3-70b-instruct", "rtx-4090", lang, "quant=Q4_K_M&offload=60&context=8192"))
    assert sentence in text
    rows = re.findall(r"\(([\d,.]+)\) [\d.,]+ GiB [\d.,]+ GiB ([\d.,]+) GiB ([✓✗])", text)
    marks = {int(re.sub(r"[,.]", "", context)): mark for context, _, mark in rows}
    for context in (8192, 32768, 131072):
        plan = plan_memory(model, hardware, Scenario(quant="Q4_K_M", offload_pct=60.0, context=context))
        without = plan_memory(model, hardware, Scenario(quant="Q4_K_M", offload_pct=0.0, context=context))
        assert marks[context] == ("✓" if plan.fit.fits else "✗") and not without.fit.fits
    assert marks[8192] == marks[32768] == "✓" and marks[131072] == "✗"
    on_gpu = dict((int(re.sub(r"[,.]", "", context)), gib) for context, gib, _ in rows)[8192]
    plan = plan_memory(model, hardware, Scenario(quant="Q4_K_M", offload_pct=60.0, context=8192))
    assert float(on_gpu.replace(",", ".")) == round(plan.fit.gpu_demand_bytes / GIB, 2)


def test_context_chart_on_unified_memory_ignores_an_offload_setting(client):
    """A Mac has no separate system RAM: the page ignores offload=60 and so must the chart's sentence."""
    text = text_of(client, url("llama-3-3-70b-instruct", "mac-studio-m3-ultra-256gb", query="offload=60"))
    assert "the offload setting is ignored" in text
    assert "as you chose" not in text


def test_context_chart_under_automatic_offload_says_it_plots_without_it(client):
    """Llama 3.3 70B at Q4_K_M does not fit an RTX 4090, so the page offloads automatically; the chart shows where
    the GPU alone stops and says so, and a page that needs no offload does not."""
    text = text_of(client, url("llama-3-3-70b-instruct", "rtx-4090"))
    assert "Without offload: the line shows where the GPUs alone stop holding the model." in text
    assert "Ohne Auslagerung: Die Linie zeigt" in text_of(client, url("llama-3-3-70b-instruct", "rtx-4090", "de"))
    assert "Without offload" not in text_of(client, url("llama-3-1-8b-instruct", "rtx-4090"))


def test_vllm_refusal_follows_max_concurrency_not_the_logged_token_count():
    """vLLM refuses a context when one request needs more KV memory than the pool (check_enough_kv_cache_memory).
    Before v0.21 its "GPU KV cache size: N tokens" line divided by the KV groups: for Gemma 3 (7 groups) N was far
    below one 131,072-token request although the request fits, so the old note said "vLLM refuses" on a page that
    fits. The modelled v0.21 prints max_concurrency × max_model_len, which agrees with the verdict."""
    _, catalog = current_catalog()
    result = estimate(catalog.model("gemma-3-27b-it"), catalog.hardware["h100-80gb-sxm"],
                      Scenario(quant="BF16", context=131_072, engine="vllm", kv_dtype="f16"))
    capacity = result.memory.runtime.capacity
    assert capacity.block_tokens < 131_072  # what a log before v0.21 would say
    assert result.memory.runtime.max_concurrency > 1  # but one request fits
    assert result.kv_tokens_capacity == int(capacity.max_concurrency * 131_072) > 131_072  # and v0.21's line says so
    assert result.fit.verdict != "exceeds"
    assert not [n for n in result.warnings if n.code.startswith("vllm_kv_pool")]
    assert [n.code for n in result.warnings] == ["vllm_vision_encoder"]  # Gemma 3 is a vision-language model

    # vLLM starts when one request fits and queues the rest (session 5: the verdict counted every sequence and said
    # "will not start"): at batch 2 the pool holds 1.08 of the 2 requests, one decodes at a time.
    two = estimate(catalog.model("gemma-3-27b-it"), catalog.hardware["h100-80gb-sxm"],
                   Scenario(quant="BF16", context=131_072, engine="vllm", kv_dtype="f16", batch=2))
    assert 1 < two.memory.runtime.max_concurrency < 2
    assert two.fit.verdict == result.fit.verdict
    assert [n.code for n in two.warnings] == ["vllm_vision_encoder", "vllm_kv_pool_below_batch"]
    assert two.aggregate_decode.batch == 1


def test_a_hybrid_vllm_pool_reads_as_v0_21_counts_it(client):
    """v0.21 prints "GPU KV cache size" as max_concurrency × max_model_len, so the page's pool is the sequences it
    holds times the context; the sentence under it said vLLM counts the tokens "as if every layer kept each of
    them", which described the num_blocks // groups figure of v0.20 and before."""
    _, catalog = current_catalog()
    result = estimate(catalog.model("gemma-3-27b-it"), catalog.hardware["h100-80gb-sxm"],
                      Scenario(quant="BF16", context=131_072, engine="vllm", kv_dtype="f16"))
    tokens = int(result.memory.runtime.capacity.max_concurrency * 131_072)
    text = text_of(client, url("gemma-3-27b-it", "h100-80gb-sxm", query="engine=vllm&quant=BF16&context=131072"))
    assert f"a pool of {tokens:,} tokens" in text
    assert ("vLLM counts those tokens as the sequences its pool holds at full context times the context. Its "
            "sliding-window layers keep a fixed number of tokens however long a request grows") in text
    assert "as if every layer kept each of them" not in text


def test_vllm_gemma_3_counts_the_kv_its_pool_hands_a_request(client):
    """Gemma 3 27B under vLLM at 8K on one H100: the breakdown's KV (3.88 GiB, 52 sliding layers) was below the
    4.38 GiB a request takes of vLLM's pool, whose groups of 10 give the sliding layers 60 slots; the fit judged the
    4.38, so usable − required was 0.50 GiB more than the headroom shown."""
    _, catalog = current_catalog()
    result = estimate(catalog.model("gemma-3-27b-it"), catalog.hardware["h100-80gb-sxm"],
                      Scenario(quant="BF16", context=8192, engine="vllm", kv_dtype="f16"))
    fit, kv = result.memory.fit, result.memory.kv
    assert kv.total_bytes == result.memory.runtime.capacity.request_bytes == 4_705_484_800
    assert fit.usable_bytes_per_gpu - fit.required_bytes == pytest.approx(fit.headroom_bytes)
    text = text_of(client, url("gemma-3-27b-it", "h100-80gb-sxm", query="engine=vllm&quant=BF16"))
    assert "Padded layer slots (vLLM groups)" in text
    assert "vLLM groups layers 10 to a group: 52 sliding layers take 6 groups = 60 slots, 8 without a layer" in text


def test_default_budget_buys_every_gpu_and_a_typed_budget_is_kept(client):
    """Power was counted for both GPUs of ?gpus=2 but the budget was one RTX 4090's $1,599 (break-even 54 months
    instead of 108)."""
    two = text_of(client, url("llama-3-3-70b-instruct", "rtx-4090", query="gpus=2"))
    assert "hardware budget $3,198" in two and "900 W" in two
    typed = text_of(client, url("llama-3-3-70b-instruct", "rtx-4090", query="gpus=2&budget=2000"))
    assert "hardware budget $2,000" in typed
    form = client.get(url("llama-3-3-70b-instruct", "rtx-4090", query="gpus=2")).content.decode()
    budget_input = re.search(r'<input[^>]*name="budget"[^>]*>', form).group(0)
    assert 'placeholder="1599 per GPU"' in budget_input and "value=" not in budget_input


def test_no_break_even_for_hardware_the_model_does_not_run_on(client):
    text = text_of(client, url("qwen3-235b-a22b-instruct-2507", "dgx-spark-gb10-128gb"))
    assert "Exceeds available GPU memory" in text
    assert "none: it does not run on this hardware" in text
    assert not re.search(r"Purchase break-even ~", text)


def test_cost_names_the_offers_accelerator_and_its_speed(client):
    """The cheapest fitting offer may be another accelerator: $0.44 per 1M tokens is an RTX 3090's (138 tok/s), not
    the RTX 4090's of the page (146 tok/s)."""
    text = text_of(client, url("llama-3-1-8b-instruct", "rtx-4090"))
    line = re.search(r"on RunPod, 1 × (RTX 3090) at \$0\.22/h \(~(\d+) tok/s there\)", text)
    assert line, text[text.index("Cost per 1M"):][:300]
    cost = float(re.search(r"Cost per 1M tokens \$([\d.]+)", text).group(1))
    assert cost == pytest.approx(1e6 / int(line.group(2)) / 3600 * 0.22, abs=0.01)


def test_cost_card_prices_prompt_tokens_at_the_same_offers_prefill_speed(client):
    """Next to the output-token cost, the input-token cost on the same offer (RunPod's RTX 3090 at $0.22/h): its
    hourly price over that accelerator's own prefill speed of the 4K prompt."""
    text = text_of(client, url("llama-3-1-8b-instruct", "rtx-4090"))
    line = re.search(r"Prompt \(input\) tokens: \$([\d.]+) per 1M on the same offer, at its prefill speed of "
                     r"~([\d,]+) tok/s for a 4K prompt", text)
    assert line, text[text.index("Cost per 1M"):][:700]
    prefill = float(line.group(2).replace(",", ""))
    assert float(line.group(1)) == pytest.approx(1e6 / prefill / 3600 * 0.22, rel=0.02)
    output = float(re.search(r"Cost per 1M tokens \$([\d.]+)", text).group(1))
    assert float(line.group(1)) < output / 10  # a prompt token costs a fraction of a generated one


@pytest.mark.parametrize("lang, pattern", [
    ("en", r"\$([\d.]+) with 16 streams, on ([\w.]+), 1 × (.+?) at \$([\d.]+)/h"),
    ("de", r"([\d,]+) \$ mit 16 Sequenzen, bei ([\w.]+), 1 × (.+?) zu ([\d,]+) \$/Std"),
])
def test_with_several_streams_the_cost_names_the_offer_cheapest_for_them(client, lang, pattern):
    """Llama 3.1 8B in BF16 under vLLM with 16 streams: one RTX 3090 is the cheapest token for one stream, but its
    KV pool holds few of the 16; per token of all 16, a larger card costs less. The page used to price the 16
    streams on the single-stream offer, at 1.8 times the cost."""
    _, catalog = current_catalog()
    scenario = Scenario(quant="BF16", engine="vllm", batch=16)
    result = catalog.estimate(catalog.model("llama-3-1-8b-instruct"), catalog.hardware["rtx-4090"], scenario)
    assert result.batch_cost.offer != result.cost.offer
    # With half the context cached (estimate.cost_depth): $0.188 on the RTX PRO 6000 against $0.338 on the 3090.
    assert result.batch_cost.batch_usd_per_mtok < result.cost.batch_usd_per_mtok * 0.6

    text = text_of(client, url("llama-3-1-8b-instruct", "rtx-4090", lang, "quant=BF16&engine=vllm&batch=16"))
    line = re.search(pattern, text)
    assert line, text[text.index("1M"):][:400]
    number = (lambda s: float(s.replace(",", "."))) if lang == "de" else float
    # Three significant digits below $1 (formatting.usd_rate): $0.0386 is not rounded to $0.04.
    assert number(line.group(1)) == pytest.approx(result.batch_cost.batch_usd_per_mtok, rel=5e-3)
    assert len(line.group(1).replace(",", ".").split(".")[1]) == 3
    assert (line.group(2), line.group(3)) == (result.batch_cost.offer.provider, result.batch_cost.accelerator_name)
    assert number(line.group(4)) == result.batch_cost.offer.hourly_usd


@pytest.mark.parametrize("lang, sentence, chunk", [
    ("en", "Not at all in this configuration: vLLM on Instinct MI300X 192GB does not run AWQ models.",
     "vLLM prefills in chunks of up to 8,192 tokens"),
    ("de", "vLLM auf Instinct MI300X 192GB führt keine AWQ-Modelle aus", "Abschnitten von bis zu 8.192 Tokens"),
])
def test_a_vllm_page_names_vllm_and_its_chunk(client, lang, sentence, chunk):
    """The FAQ said "llama.cpp on Instinct MI300X does not run AWQ models" on a vLLM page, and the prefill text gave
    the 4,096-token prompt as vLLM's chunk (max_num_batched_tokens is 8,192 on an MI300X)."""
    page = url("llama-3-3-70b-instruct", "instinct-mi300x-192gb", lang, "engine=vllm&kv_dtype=f16&quant=")
    text = text_of(client, page + "AWQ")
    assert sentence in text and "llama.cpp on Instinct" not in text
    text = text_of(client, page + "FP8")
    assert chunk in text


def test_a_vllm_batch_page_says_what_its_total_and_its_verdict_count(client):
    """Llama 3.1 8B FP8 × 16 under vLLM on a 16 GB card read "Fits with safe headroom" beside 26.43 GiB of 16 GB
    (165 %): the total counts all 16 full-context sequences, the verdict what vLLM starts with. The page now says
    so, and the start-up demand plus the headroom it states is the usable memory."""
    _, catalog = current_catalog()
    scenario = Scenario(engine="vllm", quant="FP8", kv_dtype="f16", batch=16)
    result = catalog.estimate(catalog.model("llama-3-1-8b-instruct"), catalog.hardware["rtx-4060-ti-16gb"], scenario)
    assert result.fit.fits and result.fit.required_bytes > result.fit.usable_bytes_per_gpu
    held = result.aggregate_decode.batch
    assert held < 16
    text = text_of(client, url("llama-3-1-8b-instruct", "rtx-4060-ti-16gb", "en",
                               "engine=vllm&quant=FP8&kv_dtype=f16&batch=16"))
    demand = round(result.fit.fullest_gpu_demand_bytes / GIB, 2)
    assert (f"That total counts all 16 sequences at full context. vLLM starts with {demand:.2f} GiB per GPU"
            in text)
    assert f"its KV pool then holds {held} of the 16 sequences at once" in text
    # The caption and the headroom give the share of the start-up demand, not 165 % of the card beside "fits".
    share = round(result.fit.gpu_demand_bytes / (16 * GIB) * 100)
    assert (f"for all 16 sequences at full context; vLLM starts with {result.fit.gpu_demand_bytes / GIB:.2f} GiB of "
            f"1 × 16 GiB ({share}%)") in text and "165%" not in text
    # ... and says that a monitor shows vLLM's whole share, not that share (85 % beside "53 % in use" read as a bug).
    assert f"{share}% of the GPU memory for weights, buffers and one sequence; vLLM reserves 90% at start-up" in text
    # The chart table and the matrix mark ✓ by the same start-up demand, beside totals for all 16: they say so.
    assert text.count("Under vLLM with 16 sequences, the verdicts are for what vLLM starts with") == 2
    m = re.search(r"it starts with ([\d.]+) GiB .*?, leaving ([\d.]+) GiB of headroom for more sequences", text)
    assert float(m.group(1)) + float(m.group(2)) == pytest.approx(result.fit.usable_bytes_per_gpu / GIB, abs=0.011)
    # Two A100s hold all 16: no queue sentence.
    text = text_of(client, url("llama-3-3-70b-instruct", "a100-80gb-sxm", "de",
                               "engine=vllm&quant=FP8&kv_dtype=f16&batch=16&gpus=2"))
    assert "sein KV-Pool fasst alle 16 gleichzeitig" in text and "warten in seiner Warteschlange" not in text


def test_unknown_power_draw_is_not_zero_watts(client):
    text = text_of(client, url("deepseek-v3-0324", "mac-studio-m3-ultra-512gb"))
    assert " 0 W at " not in text
    assert "No power draw is published for this hardware" in text


def test_an_8bit_cache_in_use_is_not_said_to_save_nothing(client):
    text = text_of(client, url("gemma-3-27b-it", "rtx-4090", query="gpus=2&batch=16&context=32768&kv_dtype=q8_0"))
    assert "saves 0.00 GiB" not in text
    saving = re.search(r"the q8_0 KV cache in use saves ([\d.]+) GiB against 16 bits", text)
    assert saving and float(saving.group(1)) > 20


def test_a_published_size_is_not_followed_by_no_published_size(client):
    text = text_of(client, url("deepseek-r1-0528", "h100-80gb-sxm", query="quant=UD-IQ1_S"))
    assert "Source: the published file size." in text
    assert "No published size for this recipe" not in text


def test_moe_offload_option_is_not_what_the_page_already_runs(client):
    """DeepSeek V3 on an RTX 4090 already runs with --n-cpu-moe 60 (automatic offload); the option "--n-cpu-moe 60
    → fits" with an "apply" link to the same URL changed nothing."""
    text = text_of(client, url("deepseek-v3-0324", "rtx-4090"))
    current = re.search(r"\(--n-cpu-moe (\d+)\)", text).group(1)
    advice = text[text.index("What to change to fit"):text.index("Recommended hardware")]
    assert f"--n-cpu-moe {current} )" not in advice
    h100 = text_of(client, url("deepseek-v3-0324", "h100-80gb-sxm"))
    advice = h100[h100.index("What to change to fit"):h100.index("Recommended hardware")]
    offered = re.search(r"--n-cpu-moe (\d+) \) → fits .*? · add the flag to the llama.cpp command", advice)
    assert offered  # from "exceeds", one with a buffer is still worth naming; there is no link to apply it


def test_runtime_table_adds_up_with_the_tied_output_copy(client):
    _, catalog = current_catalog()
    plan = plan_memory(catalog.model("gemma-3-27b-it"), catalog.hardware["rtx-4090"], Scenario())
    assert plan.tied_output_copy_bytes > 1 * GIB
    text = text_of(client, url("gemma-3-27b-it", "rtx-4090"))
    table = text[text.index("Buffer Where Size Formula"):text.index("Runtime total")]
    sizes = [float(x) for x in re.findall(r" ([\d.]+) GiB ", table)]
    total = float(re.search(r"Runtime total ([\d.]+) GiB", text).group(1))
    assert sum(sizes) == pytest.approx(total, abs=0.003)
    assert total == round(plan.runtime_bytes / GIB, 3)


def test_a_tied_output_head_left_on_the_cpu_has_no_gpu_copy(client):
    """Gemma 3 27B at 128K on an RTX 4090: -ngl 54 of 62 blocks leaves the output layer on the CPU, where the tied
    head is the mmapped embedding itself. The runtime table listed a 1.08 GiB GPU copy that neither the GPU's load
    (22.71 GiB) nor the decode's reads counted."""
    _, catalog = current_catalog()
    plan = plan_memory(catalog.model("gemma-3-27b-it"), catalog.hardware["rtx-4090"], Scenario(context=131072))
    assert plan.placement.gpu_layers <= len(plan.layout.blocks)
    assert plan.tied_output_copy_bytes == 0.0
    assert plan.runtime_bytes == plan.runtime.device_bytes + plan.runtime.host_bytes
    text = text_of(client, url("gemma-3-27b-it", "rtx-4090", query="context=131072"))
    assert "copy of the tied token embedding" not in text
    table = text[text.index("Buffer Where Size Formula"):text.index("Runtime total")]
    total = float(re.search(r"Runtime total ([\d.]+) GiB", text).group(1))
    assert sum(float(x) for x in re.findall(r" ([\d.]+) GiB ", table)) == pytest.approx(total, abs=0.003)


def test_formula_cells_count_one_sequence_and_the_gpus_of_a_replicated_cache(client):
    text = text_of(client, url("gemma-3-27b-it", "rtx-4090"))
    assert "× 1 sequences" not in text and "× 1 sequence " in text
    deepseek = text_of(client, url("deepseek-v3-0324", "h100-80gb-sxm",
                                   query="quant=FP8&context=131072&gpus=8&engine=vllm&kv_dtype=fp8&batch=16"))
    assert re.search(r"B/token/GPU \(not split by TP\) × 131 072 tokens × 16 sequences × 8 GPUs", deepseek)


def test_context_labels_read_as_model_cards_write_them(client):
    assert [context_label(n) for n in (8192, 131_072, 128_000, 200_000, 40_960, 1_048_576, 1_000_000)] == [
        "8K", "128K", "128K", "200K", "40K", "1M", "1M"]
    text = text_of(client, url("lfm2-2-6b", "rtx-4090"))
    assert "125K" not in text
    assert "(131,072)" in text and "beyond the model's 128,000-token limit" in text
    # A context past the model's limit is no ✓, even where the memory would hold it (Qwen3 32B at 64K: 40,960).
    qwen = text_of(client, url("qwen3-32b", "rtx-4090", query="gpus=2"))
    row = re.search(r"64K \(65,536\) [\d.]+ GiB [\d.]+ GiB [\d.]+ GiB (\S+) \(([^)]*)\)", qwen)
    assert row.groups() == ("✗", "the memory would hold it, but it is beyond the model's 40,960-token limit")


def test_long_times_read_in_seconds():
    assert ms(109_546.0) == "~110 s" and ms(488.4) == "~488 ms" and ms(999.4) == "~999 ms"
    # From a second on, seconds with one decimal ("~5,129 ms" was GLM-4.5's TTFT on an MI325X), whole from 10 s.
    assert ms(999.6) == "~1.0 s" and ms(5_129.0) == "~5.1 s" and ms(9_949.0) == "~9.9 s" and ms(9_999.0) == "~10 s"
    assert ms(5_129.0, lower_bound=True) == "≥ 5.1 s"


def test_faq_answer_ends_with_a_verdict_sentence_not_a_pill_word(client):
    body = client.get(url("gemma-3-27b-it", "rtx-4090", query="quant=Q6_K")).content.decode()
    blocks = [json.loads(b) for b in re.findall(r'<script type="application/ld\+json"[^>]*>(.*?)</script>', body,
                                                re.S)]
    faq = next(b for b in blocks if b.get("@type") == "FAQPage")
    answer = faq["mainEntity"][0]["acceptedAnswer"]["text"]
    assert answer.endswith("Tight headroom (< 8% buffer).")
    assert "of it stays in system RAM, so the GPU holds" in answer


def test_launch_commands_ask_the_gguf_repo_only_for_files_it_publishes(client):
    """ggml-org/gpt-oss-120b-GGUF holds the MXFP4_MOE file only and ggml-org/gemma-3-27b-it-GGUF Q4_K_M, Q8_0 and
    F16 (catalog field gguf_repo_quants, from the repos' listings): "-hf ggml-org/gpt-oss-120b-GGUF:Q4_K_M" or
    ":BF16" would fail to download."""
    text = text_of(client, url("gpt-oss-120b", "rtx-4090", query="quant=Q4_K_M"))  # a file the repo lacks
    assert "-hf ggml-org/gpt-oss-120b-GGUF:Q4_K_M" not in text
    # 62 GB of Q4_K_M: published in parts, so -m names the first (launch.gguf_in_parts)
    assert "llama-server -m ./gpt-oss-120b-Q4_K_M-00001-of-0000N.gguf" in text
    assert "ggml-org/gpt-oss-120b-GGUF publishes MXFP4_MOE, no Q4_K_M file: choose that format" in text
    bf16_gemma = text_of(client, url("gemma-3-27b-it", "rtx-4090", query="quant=BF16"))
    assert "publishes Q4_K_M, Q8_0, F16, no BF16 file: choose one of those formats" in bf16_gemma
    native = text_of(client, url("gpt-oss-120b", "h100-80gb-sxm", query="quant=MXFP4_MOE"))
    assert "llama-server -hf ggml-org/gpt-oss-120b-GGUF \\" in native  # one file type: no tag, as the guide has it
    assert "vllm serve openai/gpt-oss-120b \\" in native  # the release's own GGUF: vLLM serves the release
    bf16 = text_of(client, url("gemma-3-27b-it", "h100-80gb-sxm", query="quant=BF16"))
    assert "llama-server -m ./gemma-3-27b-it-BF16-00001-of-0000N.gguf" in bf16
    q8 = text_of(client, url("gemma-3-27b-it", "h100-80gb-sxm", query="quant=Q8_0"))
    assert "llama-server -hf ggml-org/gemma-3-27b-it-GGUF:Q8_0" in q8
    assert "vllm serve ggml-org/gemma-3-27b-it-GGUF:Q8_0" in q8  # vLLM's GGUF plugin takes repo:type
    glm = text_of(client, url("glm-4-5", "instinct-mi325x-256gb"))  # listing unknown: the tag is asked for
    assert "llama-server -hf unsloth/GLM-4.5-GGUF:Q4_K_M" in glm
    # ... and the page says the tag was not seen in the repo (note gguf_tag_unverified)
    assert ("The catalog names unsloth/GLM-4.5-GGUF but not the files it publishes: check that it has a Q4_K_M file "
            "before you run this command, or use a local file.") in glm
    assert "but not the files it publishes" not in q8  # ggml-org/gemma-3-27b-it-GGUF's files are listed


@pytest.mark.parametrize("hardware, reason", [
    ("ascend-910b-64gb", "No vLLM command: vLLM on Ascend 910B 64GB does not run Q4_0 models (it runs AWQ, BF16, FP16)."),
    ("arc-pro-b60-24gb", "No vLLM command: vLLM on Arc Pro B60 24GB does not run Q4_K_M models."),
])
def test_no_vllm_command_for_a_format_vllm_does_not_run_there(client, hardware, reason):
    """vllm-ascend loads no GGUF (and no FP8 or GPTQ on the 910B/910C), vLLM on Intel GPUs no GGUF: a llama.cpp page
    offered `vllm serve ./qwen3-32b-Q4_0.gguf` on an Ascend 910B."""
    text = text_of(client, url("qwen3-32b", hardware))
    assert reason in text and "vllm serve" not in text
    assert "vLLM does not offload by itself" not in text  # the format is the reason given, not the memory
    deepseek = text_of(client, url("deepseek-v3-0324", "ascend-910b-64gb", query="engine=vllm&gpus=16&quant=FP8"))
    assert "vLLM runs only AWQ, BF16, FP16 models on this accelerator: FP8 does not run here." in deepseek


def test_no_vllm_command_where_vllm_would_not_start(client):
    """vLLM offloads nothing by itself: on a llama.cpp page whose configuration needs system RAM, a vLLM line
    without --cpu-offload-gb would fail at start-up (120 B at MXFP4 on a 24 GB card), so the page says why instead."""
    text = text_of(client, url("gpt-oss-120b", "rtx-4090", query="quant=MXFP4_MOE"))
    assert "llama-server -hf ggml-org/gpt-oss-120b-GGUF" in text and "vllm serve" not in text
    assert "No vLLM command: vLLM does not offload by itself" in text
    # It names what vLLM would need: Qwen3 32B at Q4_K_M read "does not fit the 21.38 GiB of each RTX 4090" on a page
    # whose llama.cpp total is 21.02 GiB (vLLM's activation peak and graphs take more).
    _, catalog = current_catalog()
    vllm = plan_memory(catalog.model("qwen3-32b"), catalog.hardware["rtx-4090"],
                       Scenario(engine="vllm", kv_dtype="f16"))
    qwen = text_of(client, url("qwen3-32b", "rtx-4090"))
    assert (f"under vLLM this configuration needs {vllm.fit.fullest_gpu_demand_bytes / GIB:.2f} GiB on the GPU, more "
            f"than the {vllm.fit.usable_bytes_per_gpu / GIB:.2f} GiB of the RTX 4090") in qwen
    german = text_of(client, url("gpt-oss-120b", "rtx-4090", lang="de", query="quant=MXFP4_MOE"))
    assert "Kein vLLM-Befehl: vLLM lagert nicht von selbst aus" in german
    on_vllm = text_of(client, url("gpt-oss-120b", "rtx-4090", query="quant=BF16&engine=vllm&offload=80"))
    assert "--cpu-offload-gb" in on_vllm


def test_mxfp4_moe_weights_match_ggml_orgs_gpt_oss_files():
    """llama.cpp benches/dgx-spark.md @4c7e989 lists ggml-org's files at 11.27 GiB (20b) and 59.02 GiB (120b)."""
    _, catalog = current_catalog()
    for slug, published_gib in (("gpt-oss-20b", 11.27), ("gpt-oss-120b", 59.02)):
        plan = plan_memory(catalog.model(slug), catalog.hardware["h100-80gb-sxm"], Scenario(quant="MXFP4_MOE"))
        assert round(plan.weights.total_bytes / GIB, 2) == published_gib


def test_german_pages_translate_buffer_names_billing_and_bit_widths(client):
    report = text_of(client, url("gemma-3-27b-it", "rtx-4090", lang="de"))
    assert "Compute-Puffer" in report and "compute buffer" not in report
    assert "pro Sekunde" in report and "per-second" not in report
    assert "QLoRA (4 Bit)" in report and "(4-bit)" not in report
    assert "/h<" not in client.get(url("gemma-3-27b-it", "rtx-4090", lang="de")).content.decode()


def test_reserved_capacity_is_billed_around_the_clock(client):
    """Lambda's reserved 8 × H100 at $14.80/h costs 14.80 × 24 × 30.4 = $10,798.08 a month at any hours of use,
    not 14.80 × 4 × 30.4 = $1,799.68."""
    text = text_of(client, url("llama-3-3-70b-instruct", "h100-80gb-sxm", query="gpus=8"))
    row = text[text.index("8x H100 SXM with InfiniBand (reserved)"):][:120]
    assert "$14.80 $10,798.08 reserved: 24 h/day" in row


def test_a_superseded_offer_is_not_listed_beside_its_successor(client):
    text = text_of(client, "/en/hardware/instinct-mi300x-192gb/")
    assert "$20.72" in text and "$15.92" not in text


def test_hardware_page_sources_architecture_interconnect_and_fp8_basis(client):
    rtx5090 = text_of(client, "/en/hardware/rtx-5090/")
    assert "(575W; FP16 sparse 838.4; FP8 sparse 1676.8; 3352 AI TOPS)" in rtx5090  # one source, not four
    h100 = text_of(client, "/en/hardware/h100-80gb-sxm/")
    assert "Architecture Hopper" in h100
    assert "NVLink 4 / PCIe 5.0 (128 GB/s bidir) · GPU-to-GPU link 900 GB/s" in h100
    rtx4090 = text_of(client, "/en/hardware/rtx-4090/")
    assert "FP8 TFLOPS (dense; GeForce: FP16 accumulate) 660.6" in rtx4090  # 2 × the FP32-accumulate 330.3


def test_compare_page_has_breadcrumbs_and_says_which_offer_is_missing(client):
    text = text_of(client, "/en/compare/llama-3-3-70b-instruct/?hw=rtx-4090:2&hw=h100-80gb-sxm")
    assert "Home › Llama 3.3 70B Instruct › Compare" in text
    assert "no catalog cloud offer of 2 × RTX 4090" in text


def test_compare_without_an_offer_of_that_count_points_to_the_accelerators_offers_not_a_made_up_cost(client):
    """No catalog offer rents 2 × H100 SXM, but offers of 1 and 8 do: separate machines are not one 2-GPU server
    (no NVLink between them), so no cost is made up from 2 single-GPU instances; the cell links to the offers."""
    body = client.get("/en/compare/llama-3-3-70b-instruct/?hw0=h100-80gb-sxm&n0=2").content.decode()
    text = " ".join(re.sub(r"<[^>]+>", " ", body).split())
    assert "no catalog cloud offer of 2 × H100 80GB SXM" in text
    assert "Catalog offers of it have other GPU counts per machine (1, 8; see the offers )." in text
    assert 'href="/en/hardware/h100-80gb-sxm/#prices"' in body
    cloud = re.search(r"Cloud per month at 4 h/day (\S+)", text)
    assert cloud.group(1) == "—"


def test_compare_rows_purchase_price_monthly_bill_at_the_visitors_hours_all_streams_and_price_per_gib(client):
    _, catalog = current_catalog()
    text = text_of(client, "/en/compare/llama-3-3-70b-instruct/"
                           "?hw0=h100-80gb-sxm&n0=2&hw1=rtx-4090&n1=1&batch=4&hours=6")
    # Purchase: 2 × the catalog's $27,500 for one H100 SXM; one RTX 4090 at $1,599.
    assert "Purchase price $55,000 2 × $27,500 $1,599" in text
    # The RTX 4090's cheapest 1-GPU offer billed 6 h a day for 30.4 days (economics.monthly_cloud_cost).
    hourly = min(o.hourly_usd for o in catalog.offers
                 if o.confirmed and o.accelerator_slug == "rtx-4090" and o.gpu_count == 1)
    monthly = float(re.search(r"Cloud per month at 6 h/day — \$([\d,.]+)", text).group(1).replace(",", ""))
    assert monthly == pytest.approx(hourly * 6 * 30.4, abs=0.01)
    # All 4 streams together, as the report's speed card shows them (the row: all concurrent streams).
    scenario = Scenario(batch=4, gpus=2)
    h100 = catalog.estimate(catalog.model("llama-3-3-70b-instruct"), catalog.hardware["h100-80gb-sxm"], scenario)
    assert f"All concurrent streams {toks(h100.aggregate_decode.tokens_per_s)}" in text
    # Per GiB like the memory rows: $55,000 over 2 × 76.0 GiB usable = $361.84 (it read $337 per decimal GB).
    assert "Price per usable GiB $361.84" in text


def test_every_report_links_to_compare_with_its_accelerator_count_and_configuration(client):
    body = client.get(url("llama-3-1-8b-instruct", "h100-80gb-sxm", query="gpus=2&quant=Q8_0&hours=6")).content
    link = html.unescape(re.search(r'<a href="([^"]+)" id="compare-link">', body.decode()).group(1))
    assert link.startswith("/en/compare/llama-3-1-8b-instruct/?hw0=h100-80gb-sxm&n0=2&quant=Q8_0&")
    assert "hours=6" in link and "gpus=" not in link
    compare = client.get(link).content.decode()
    assert re.search(r'<option value="h100-80gb-sxm" selected>', compare)
    assert re.search(r'<select name="n0" id="id_n0">.*?<option value="2" selected>', compare, re.S)
    assert "Cloud per month at 6 h/day" in compare


def test_a_break_even_beyond_ten_years_reads_in_years(client):
    text = text_of(client, url("llama-3-3-70b-instruct", "h100-80gb-sxm", query="budget=30000&gpus=2"))
    # No catalog offer rents 2 × H100: the same tokens on the offer where one costs least (packet.ai's RTX PRO 6000
    # at $0.66/h, ~32 tok/s against ~53.3 here), rented 53.3 / 32 = 1.67 h per hour of use: $133.66 a month;
    # 30,000 / (133.66 − 29.79) = 288.8 months. (Against the L40S's $48.64 for 4 h it read ~133 years.)
    assert "Purchase break-even ~24 years" in text


def test_finetune_assumptions_name_what_the_numbers_assume(client):
    mixtral = text_of(client, url("mixtral-8x7b-instruct", "h100-80gb-sxm"))
    assert "paged 8-bit AdamW" in mixtral
    # One stated MoE assumption (routed experts in NF4 as Unsloth holds them, no adapters on them), and the stock
    # transformers v5 stack's figure beside it, whose fused experts bitsandbytes leaves bf16: more than the default.
    assert "For this MoE model QLoRA keeps the routed experts in 4-bit NF4 too, as Unsloth's patched loader does" in mixtral
    stock = re.search(r"leaves in bf16: QLoRA there needs ([\d.]+) GiB, 2 × H100 80GB SXM", mixtral)
    default = re.search(r"QLoRA \(4-bit\) ([\d.]+) GiB", mixtral)
    assert stock and default and float(stock[1]) > 3 * float(default[1])
    llama = text_of(client, url("llama-3-1-8b-instruct", "h100-80gb-sxm"))
    assert "For this MoE model" not in llama and "stock Hugging Face stack" not in llama
    assert "CUDA context and kernels" not in llama  # the label also covered ROCm and the QLoRA dequant buffer


def test_matrix_marks_a_dynamic_quant_sized_by_another_types_rules(client):
    """Without a published size UD-Q2_K_XL is sized with the Q2_K rules: the same bytes as Q2_K, said so."""
    text = text_of(client, url("gemma-3-27b-it", "rtx-4090"))
    matrix = text[text.index("Quantization matrix"):]
    row = matrix[matrix.index(" UD-Q2_K_XL "):][:200]
    assert "≈ Q2_K rules (size not published)" in row


def test_a_configuration_that_does_not_run_shows_no_speed(client):
    """Qwen3 235B at Q4_K_M needs 134.47 GiB; the DGX Spark's unified 99.8 GiB cannot hold it and has no separate
    RAM to offload to, yet the page said "~16.4 tok/s" in the summary, the speed card, the simulator and the meta
    description. An RTX 4090 also cannot hold it but llama.cpp's automatic offload runs it: that speed stays."""
    _, catalog = current_catalog()
    model = catalog.model("qwen3-235b-a22b-instruct-2507")
    assert not plan_memory(model, catalog.hardware["dgx-spark-gb10-128gb"], Scenario()).runs
    assert plan_memory(model, catalog.hardware["rtx-4090"], Scenario()).runs

    body = client.get(url("qwen3-235b-a22b-instruct-2507", "dgx-spark-gb10-128gb")).content.decode()
    description = re.search(r'<meta name="description" content="([^"]*)"', body).group(1)
    assert "tok/s" not in description and "more than it holds" in description
    text = text_of(client, url("qwen3-235b-a22b-instruct-2507", "dgx-spark-gb10-128gb"))
    assert "more than it holds: it does not run there" in text
    speed = text[text.index("Speed and cost"):text.index("Cost per 1M tokens")]
    assert "does not run" in speed and "tok/s" not in speed
    assert "Nothing to simulate" in text and "Not at all in this configuration" in text
    model_page = text_of(client, "/en/model/qwen3-235b-a22b-instruct-2507/")
    row = model_page[model_page.index("DGX Spark (GB10 128GB) 128 GB"):][:160]
    assert "does not run" in row
    offloaded = text_of(client, url("qwen3-235b-a22b-instruct-2507", "rtx-4090"))
    assert re.search(r"Decode \(one stream\) ~[\d.]+ tok/s", offloaded)


def test_models_without_shapes_split_over_gpus_under_llama_cpp():
    """A model without config.json is one pseudo-block; it was put whole on GPU 0, and the offload then took bytes
    from the empty GPUs (Devstral Small 24B on 2 × RTX 3060: [13.4, −1.5] GiB, "exceeds")."""
    _, catalog = current_catalog()
    for slug, hardware, gpus in (("devstral-small-24b", "rtx-3060-12gb", 2), ("cohere-command-a-111b", "rtx-4090", 4),
                                 ("glm-5-3-753b", "b300-288gb", 8)):
        plan = plan_memory(catalog.model(slug), catalog.hardware[hardware], Scenario(gpus=gpus))
        demand = plan.placement.demand_per_gpu
        assert max(demand) == pytest.approx(min(demand)), (slug, demand)  # an even --tensor-split
        assert plan.fit.verdict != "exceeds", slug
        single = plan_memory(catalog.model(slug), catalog.hardware[hardware], Scenario())
        assert min(single.placement.device_bytes) >= 0
    offloaded = plan_memory(catalog.model("cohere-command-a-111b"), catalog.hardware["rtx-4090"], Scenario(gpus=2))
    assert offloaded.placement.offloaded_bytes > 0 and min(offloaded.placement.device_bytes) > 0


def test_a_tied_output_head_off_the_gpu_is_read_from_system_ram():
    """Gemma 3 12B BF16 on an RTX 4090 runs -ngl 48 of 49 slots: the tied head is computed on the CPU from the
    embedding in RAM (1.88 GiB per token at 60 GB/s), so ~16.7 tok/s, not the 35.0 of reading it from VRAM."""
    _, catalog = current_catalog()
    result = estimate(catalog.model("gemma-3-12b-it"), catalog.hardware["rtx-4090"], Scenario(quant="BF16"))
    assert result.placement.gpu_layers == 48
    assert result.decode.weight_bytes_ram == pytest.approx(result.memory.layout.output_bytes)
    assert 15 < result.decode.tokens_per_s < 18


def test_estimated_models_borrow_from_the_right_relative():
    _, catalog = current_catalog()
    kimi_dev = catalog.model("kimi-dev-72b")  # reportedly a Qwen2.5-72B fine-tune, not a Kimi K2 (1T MLA MoE)
    assert kimi_dev.kv_proxy.slug == "qwen2-5-72b-instruct"
    glm53, glm5 = catalog.model("glm-5-3-753b"), catalog.model("glm-5")  # no active count published
    from reports.sizing.parameters import count_parameters
    ratio = count_parameters(glm5).active / count_parameters(glm5).total
    assert count_parameters(glm53).active == pytest.approx(753e9 * ratio)
    assert catalog.model("qwen3-4b-instruct-2507").max_context == 262_144  # the 2507 model card


def test_the_lead_describes_the_configuration_of_the_url(client):
    """The home page links "what runs on 8 × H100" to ?gpus=8 and the hardware pages to ?quant=Q8_0; the lead
    described 1 GPU at Q4_K_M (~0.364 tok/s) above a body with ~11.5 tok/s."""
    eight = text_of(client, url("llama-3-1-405b-instruct", "h100-80gb-sxm", query="gpus=8"))
    lead = eight[eight.index("Llama 3.1 405B Instruct (406 B parameters, dense"):][:300]
    assert "on 8 × H100 80GB SXM" in lead
    speed = re.search(r"\((~[\d.]+ tok/s) decode at 8K, one sequence\)", lead).group(1)
    assert f"Decode (one stream) {speed}" in eight
    q8 = text_of(client, url("llama-3-1-8b-instruct", "rtx-4090", query="quant=Q8_0"))
    assert "of weights at Q8_0" in q8 and "of weights at Q4_K_M" not in q8
    assert "At 32,768 tokens of context and Q8_0 weights" in q8
    default = text_of(client, url("llama-3-1-8b-instruct", "rtx-4090"))
    assert "of weights at Q4_K_M" in default  # the shared lead of the base report is unchanged
    offloaded = text_of(client, url("qwen3-235b-a22b-instruct-2507", "rtx-4090"))
    assert re.search(r"more than its memory: with [\d.]+ GiB in system RAM it decodes at ~[\d.]+ tok/s", offloaded)
    unknown_kv = text_of(client, url("cohere-command-a-111b", "rtx-4090"))
    assert "The KV cache of this model is not known: these totals leave it out." in unknown_kv
    assert "attention type not published" in unknown_kv


def test_a_model_page_does_not_call_a_tight_fit_comfortable(client):
    text = text_of(client, "/en/model/deepseek-v3-0324/")
    block = text[text.index("On Mac Studio M3 Ultra 512GB"):][:400]
    assert "Tight headroom" in block and "comfortably at" not in block
    assert "with tight headroom: none holds it comfortably" in block


@pytest.mark.parametrize("lang, expected, offloaded", [
    ("en", "GLM-5 (744B) on Instinct MI325X 256GB: 419.08 GiB (Q4_K_M, 8K context), more than it holds: runs with "
           "178.66 GiB in system RAM", "178.66 GiB"),
    ("de", "GLM-5 (744B) auf Instinct MI325X 256GB: 419,08 GiB (Q4_K_M, 8K Kontext), mehr als verfügbar: läuft mit "
           "178,66 GiB im System-RAM", "178,66 GiB"),
])
def test_an_offloaded_reports_description_says_it_does_not_fit_the_gpu(client, lang, expected, offloaded):
    """It read "419.08 GiB (Q4_K_M, 8K context), 421.64 GiB at 32K, ~9.09 tok/s": a snippet that implies it runs on
    the GPU. The figures are the page's own (its fit card's verdict names the same offload)."""
    body = client.get(url("glm-5", "instinct-mi325x-256gb", lang)).content.decode()
    description = html.unescape(re.search(r'<meta name="description" content="([^"]*)"', body).group(1))
    assert description.startswith(expected)
    fit_card = html.unescape(body[body.index('id="fit"'):body.index('id="speed"')])
    assert offloaded in fit_card


def test_meta_descriptions_have_no_stray_newline_and_say_when_nothing_holds_the_model(client):
    for path in (url("llama-3-1-8b-instruct", "rtx-4090"), "/en/model/glm-5/"):
        body = client.get(path).content.decode()
        description = re.search(r'<meta name="description" content="([^"]*)"', body).group(1)
        assert description == description.strip(), path
    glm5 = client.get("/en/model/glm-5/").content.decode()
    description = re.search(r'<meta name="description" content="([^"]*)"', glm5).group(1)
    assert "fits on 0 of" not in description and "accelerators holds alone" in description


def test_model_page_description_names_the_accelerator_its_totals_are_for(client):
    """The totals include the default accelerator's runtime buffers (SYCL's on an Arc Pro B60, Metal's on a Mac):
    a description that quotes them without the accelerator reads as the model's own size."""
    for path in ("/en/model/qwen3-30b-a3b-instruct-2507/", "/de/model/qwen3-30b-a3b-instruct-2507/", "/en/model/glm-5/"):
        body = client.get(path).content.decode()
        description = html.unescape(re.search(r'<meta name="description" content="([^"]*)"', body).group(1))
        default = html.unescape(re.search(r'<h2 id="default-heading">[^<]*?(?:On|Auf) ([^<]+)</h2>', body).group(1))
        assert f" {default}" in description, (path, default, description)
    moe = client.get("/en/model/gpt-oss-20b/").content.decode()
    assert re.search(r'content="gpt-oss-20b \([\d.]+ B parameters, [\d.]+ B active\):', moe)
    dense = client.get("/en/model/llama-3-1-8b-instruct/").content.decode()
    assert re.search(r'content="Llama 3.1 8B Instruct \([\d.]+ B parameters\):', dense)  # no "8.03 B active"


def test_first_within_keeps_the_first_alternative_short_enough():
    from django.template import Context, Template, TemplateSyntaxError

    template = Template("{% load seo %}{% first_within 12 %} {{ a }} long one{% or %}{{ a }} &amp; b{% or %}x"
                        "{% endfirst_within %}")
    assert template.render(Context({"a": "ab"})) == "ab long one"  # 11 characters, the spaces around stripped
    assert template.render(Context({"a": "abcd"})) == "abcd &amp; b"  # the entity counts as one: 10
    assert template.render(Context({"a": "abcdefghijk"})) == "x"
    assert Template("{% load seo %}{% first_within 3 %}abcd{% endfirst_within %}").render(Context()) == "abcd"
    with pytest.raises(TemplateSyntaxError):
        Template("{% load seo %}{% first_within %}a{% endfirst_within %}")


@pytest.mark.parametrize("lang", ["en", "de"])
def test_meta_descriptions_fit_a_search_result(client, lang):
    """Search engines cut a description after about 160 characters; ours ran to 165-214 and lost their tail. The
    four longest model names in each of the three report variants (runs: RTX PRO 6000; more than it holds: RTX 3060;
    a format the backend does not run: the Atlas 300I Duo) and on the four longest accelerator names, every model
    page, and the compare, hardware, home and methodology pages."""
    _, catalog = current_catalog()
    longest_models = sorted(catalog.model_rows, key=lambda row: -len(row.name))[:4]
    longest_names = sorted(catalog.hardware.values(), key=lambda spec: -len(spec.name))[:4]
    longest_hardware = longest_names[0]
    paths = [url(row.slug, hardware, lang) for row in longest_models
             for hardware in ("rtx-pro-6000-blackwell", "rtx-3060-12gb", "atlas-300i-duo-96gb",
                              *(spec.slug for spec in longest_names))]
    # The longest of a scan of every report in both languages before first_within (161-183 characters): not
    # sizable there, and offloaded to system RAM.
    paths += [url(model, hardware, lang) for model, hardware in (
        ("deepseek-v4-1-flash-552b-a16b", "kunlunxin-p800-64gb"), ("deepseek-v4-1-flash-552b-a16b", "b300-288gb"),
        ("llama-4-maverick-17b-128e", "radeon-ai-pro-r9700-32gb"), ("minimax-m3-1-flash-428b-a23b", "gaudi-3-128gb"))]
    # Every model page: the longest description is not the longest name's (Kimi K2's ran to 182 characters).
    paths += [f"/{lang}/model/{row.slug}/" for row in catalog.model_rows]
    paths += [f"/{lang}/compare/{row.slug}/" for row in longest_models]
    paths += [f"/{lang}/hardware/{longest_hardware.slug}/", f"/{lang}/", f"/{lang}/methodology/"]
    for path in paths:
        body = client.get(path).content.decode()
        description = html.unescape(re.search(r'<meta name="description" content="([^"]*)"', body).group(1))
        assert len(description) <= 160, (path, len(description), description)
        if "/report/" in path:  # a report's <title> within what a result shows (~60): the heading's shorter forms
            title = html.unescape(re.search(r"<title>(.*?)</title>", body, re.S).group(1)).strip()
            assert len(title) <= 65, (path, len(title), title)


@pytest.mark.parametrize("lang, order", [("en", "desc"), ("en", "asc"), ("de", "desc"), ("de", "asc")])
def test_upper_bound_speeds_sort_by_their_value_among_the_estimates(client, lang, order):
    """A "≤ 427 tok/s" bound (a model without its layer count) sorted after "~0.271 tok/s" in both directions and
    read as the slowest: it sorts by its value, and its "≤" says it is a bound."""
    text = text_of(client, f"/{lang}/hardware/rtx-4090/?sort=decode&order={order}")
    table = text[text.index("Parameter"):]
    found = re.findall(r"([≤~])\s?([\d,.]+) tok/s", table)
    group, decimal = (".", ",") if lang == "de" else (",", ".")
    speeds = [float(value.replace(group, "").replace(decimal, ".")) for _, value in found]
    assert "≤" in {mark for mark, _ in found} and "~" in {mark for mark, _ in found}
    assert speeds == sorted(speeds, reverse=order == "desc")
    assert "listed after" not in text


def test_internal_seed_citations_read_as_the_earlier_edition(client):
    text = text_of(client, "/en/hardware/radeon-ai-pro-r9700-32gb/")
    assert "../seeds" not in text and "seed page" not in text
    assert "the earlier edition of this site (unverified: no vendor datasheet found)" in text


def test_search_understands_q_and_titles_without_a_double_space(client):
    body = client.get("/en/search/?q=h100").content.decode()
    assert "<title>Search: h100 — LLM Sizer</title>" in body
    assert "H100 80GB SXM" in body
    title = re.search(r"<title>(.*?)</title>", client.get("/en/search/?model=llama").content.decode()).group(1)
    assert title == "Search: llama — LLM Sizer"


@pytest.mark.parametrize("path, target", [
    ("/en/hardware/RTX-4090/", "/en/hardware/rtx-4090/"),
    ("/de/model/Llama-3-1-8B-Instruct/?context=32768", "/de/model/llama-3-1-8b-instruct/?context=32768"),
])
def test_slugs_typed_with_capitals_redirect_to_the_lower_case_page(client, path, target):
    response = client.get(path)
    assert response.status_code == 301 and response["Location"] == target
    assert client.get(target).status_code == 200


def test_the_lower_case_redirect_never_leaves_the_site(client):
    response = client.get("//Evil.example/")
    assert response.status_code in (302, 404) and "evil" not in response.get("Location", "").lower()


def test_aws_h100_is_offered_as_the_eight_gpu_instance_aws_sells(client):
    """The catalog had 'H100 per GPU-hour (p5.48xlarge is sold as 8 GPUs)' as a 1-GPU, 80 GB offer at $6.88/h,
    which nobody can rent; AWS sells the p5.48xlarge whole: 8 × $6.88 = $55.04 per hour."""
    text = text_of(client, "/en/hardware/h100-80gb-sxm/")
    assert "p5.48xlarge (8 × H100 80GB)" in text and "$55.04" in text
    assert "per GPU-hour (p5.48xlarge is sold as 8 GPUs)" not in text


def test_fit_card_with_automatic_offload_says_what_the_gpu_holds_after_it(client):
    """GLM-5 at Q4_K_M on one MI325X: the card said "418.55 GiB on the GPU" while 178.66 GiB had been moved to
    system RAM; the GPU holds 239.88 GiB. The memory bar's weights segment is what was not moved, and says so."""
    _, catalog = current_catalog()
    plan = plan_memory(catalog.model("glm-5"), catalog.hardware["instinct-mi325x-256gb"], Scenario())
    placement = plan.fit.placement
    assert placement.automatic_offload and plan.fit.verdict == "exceeds"
    held = placement.placed_on_gpus_bytes
    assert held <= plan.fit.usable_bytes_per_gpu < plan.fit.gpu_demand_bytes

    text = text_of(client, url("glm-5", "instinct-mi325x-256gb"))
    expected = (f"The GPU would have to hold {plan.fit.gpu_demand_bytes / GIB:.2f} GiB; automatic offload moves "
                f"{placement.offloaded_bytes / GIB:.2f} GiB to system RAM, so it holds {held / GIB:.2f} GiB.")
    assert expected in text
    assert f"{plan.fit.gpu_demand_bytes / GIB:.2f} GiB on the GPU" not in text
    assert "what the GPU lacks to hold it all: the offload makes up for it" in text
    assert f"Model weights not offloaded: {(plan.weights_loaded_bytes - placement.offloaded_weight_bytes) / GIB:.2f}" \
        in text


def test_headroom_of_several_gpus_is_the_fullest_gpus(client):
    """gpt-oss-120b on 2 × RTX 5090 at 32K: the layer split leaves the first GPU short and the second with room;
    the summed headroom read "+0.21 GiB" next to "Exceeds"."""
    _, catalog = current_catalog()
    plan = plan_memory(catalog.model("gpt-oss-120b"), catalog.hardware["rtx-5090"], Scenario(gpus=2, context=32768))
    demand = plan.fit.placement.demand_per_gpu
    assert max(demand) > plan.fit.usable_bytes_per_gpu > min(demand) and plan.fit.verdict == "exceeds"
    assert sum(demand) < 2 * plan.fit.usable_bytes_per_gpu  # the sum alone would look like room to spare
    assert plan.fit.headroom_bytes == pytest.approx(plan.fit.usable_bytes_per_gpu - max(demand))

    text = text_of(client, url("gpt-oss-120b", "rtx-5090", query="gpus=2&context=32768&quant=Q4_K_M"))
    assert f"Headroom {plan.fit.headroom_bytes / GIB:.2f} GiB" in text
    assert plan.fit.headroom_bytes < 0
    assert "what the fullest GPU lacks to hold its share" in text


@pytest.mark.parametrize("lang, moe, license_text", [
    ("en", "Multi-head latent attention (MLA), mixture of experts (MoE)", "License: MIT"),
    ("de", "Mixture of Experts (MoE)", "Lizenz: MIT"),
])
def test_lead_names_moe_and_the_license_as_the_seed_does(client, lang, moe, license_text):
    """Seed 000: "GLM-5 (744B) (744B gesamt, 40B aktiv, Multi-head Latent Attention (MLA) MoE)" and "MLA MoE · MIT";
    the catalog records GLM-5's license."""
    lead = text_of(client, url("glm-5", "instinct-mi325x-256gb", lang=lang))
    assert moe in lead and license_text in lead


def test_lead_of_a_dense_model_without_recorded_license_points_to_the_model_card(client):
    text = text_of(client, url("llama-3-1-8b-instruct", "rtx-4090"))
    assert "mixture of experts" not in text
    # The catalog records Llama 3.1's license (meta-llama/llama-models models/llama3_1/LICENSE); Qwen3.5 27B's is not
    # sourced, so its page points to the model card.
    assert "License: Llama 3.1 Community License" in text and "License: see the model card" not in text
    assert "License: see the model card" in text_of(client, url("qwen3-5-27b", "rtx-4090"))
    # All of a dense model's parameters are active: "8.03 B total, 8.03 B active" said it twice.
    assert "Llama 3.1 8B Instruct (8.03 B parameters, dense, Grouped-query attention (GQA)) uses" in text
    assert "Model 8.03 B, dense · hardware 24 GB" in text and " active" not in text.split(" uses ")[0]
    german = text_of(client, url("llama-3-1-8b-instruct", "rtx-4090", lang="de"))
    assert "(8,03 Mrd. Parameter, dicht (kein MoE), Grouped-Query Attention (GQA)) belegt" in german


def test_offload_explains_the_ram_and_host_link_terms_that_dominate(client):
    """GLM-5 on one MI325X reads 5.58 GiB a token from system RAM (~100 of 110 ms) and copies 178.66 GiB over PCIe
    5.0 for every prefill micro-batch; the derivation named neither."""
    _, catalog = current_catalog()
    result = catalog.estimate(catalog.model("glm-5"), catalog.hardware["instinct-mi325x-256gb"], Scenario())
    text = text_of(client, url("glm-5", "instinct-mi325x-256gb"))
    assert f"System RAM: 60 GB/s (a desktop's dual-channel DDR5; servers with more memory channels read faster), " \
        f"{result.decode.ram_ms:,.2f} ms per token." in text
    assert result.prefill.host_link_gbs == 50.0  # "PCIe 5.0 x16" in the catalog
    assert (f"The {result.prefill.weight_bytes_ram / GIB:.2f} GiB of weights in system RAM cross the host link "
            f"(PCIe, 50 GB/s) once per micro-batch of 512 tokens") in text


def test_vllm_on_a_vision_language_model_says_the_encoder_is_not_counted(client):
    text = text_of(client, url("gemma-3-27b-it", "h100-80gb-sxm", query="engine=vllm&quant=BF16"))
    assert "vLLM also loads this model's vision encoder, which the estimate does not count" in text
    plain = text_of(client, url("llama-3-1-8b-instruct", "h100-80gb-sxm", query="engine=vllm&quant=BF16"))
    assert "vision encoder" not in plain


def test_cann_runs_only_its_formats_and_the_atlas_is_not_recommended_for_k_quants(client):
    """llama.cpp's CANN backend runs FP16/Q8_0/Q4_0 models, the 310P (Atlas 300I Duo) F16 and F32 only
    (docs/backend/CANN.md); the Atlas was the "best value multi-GPU" for GLM-4.5 at Q4_K_M."""
    _, catalog = current_catalog()
    atlas, ascend = catalog.hardware["atlas-300i-duo-96gb"], catalog.hardware["ascend-910b-64gb"]
    model = catalog.model("qwen3-8b")
    assert not plan_memory(model, atlas, Scenario()).runs
    assert plan_memory(model, atlas, Scenario(quant="F16")).runs
    assert not plan_memory(model, ascend, Scenario()).runs and plan_memory(model, ascend, Scenario(quant="Q8_0")).runs
    # The page opens at F16 there (estimate.default_quant); Q4_K_M, asked for, says why it does not run.
    assert "Memory breakdown" in text_of(client, url("qwen3-8b", "atlas-300i-duo-96gb"))
    text = text_of(client, url("qwen3-8b", "atlas-300i-duo-96gb", query="quant=Q4_K_M"))
    assert "llama.cpp runs only F16, F32 models on this accelerator: Q4_K_M does not run here." in text
    assert "llama.cpp on Atlas 300I Duo 96GB (310P) does not run Q4_K_M models." in text
    assert "more than it holds" not in text
    model_page = text_of(client, "/en/model/glm-4-5/")
    assert "Atlas" not in model_page[model_page.index("Recommended hardware"):][:600]


GPT_OSS_ON_CANN = {
    "en": ("Every GGUF of gpt-oss-20b keeps its routed experts in MXFP4, at F16 too, and llama.cpp's backend on this "
           "accelerator has no kernel for MXFP4: no format of it runs here under llama.cpp. Choose vLLM as the engine."),
    "de": ("Jedes GGUF von gpt-oss-20b hält seine gerouteten Experten in MXFP4, auch bei F16, und das Backend von "
           "llama.cpp auf diesem Beschleuniger hat keinen Kernel für MXFP4: Unter llama.cpp läuft hier kein Format "
           "davon. Wählen Sie vLLM als Engine."),
}


@pytest.mark.parametrize("lang", ["en", "de"])
def test_gpt_oss_on_the_atlas_opens_under_vllm_and_says_why_not_llama_cpp(client, lang):
    """The report of gpt-oss on the Atlas 300I Duo said it runs at F16 under llama.cpp (~59 tok/s): its GGUF keeps
    the experts in MXFP4, which llama.cpp's CANN backend has no kernel for. It opens under vLLM (FP16, the 310P's
    only type) and, asked for llama.cpp, says why nothing runs."""
    opening = text_of(client, url("gpt-oss-20b", "atlas-300i-duo-96gb", lang))
    assert "vllm serve" in opening and "FP16" in opening
    text = text_of(client, url("gpt-oss-20b", "atlas-300i-duo-96gb", lang, query="engine=llama.cpp&quant=F16"))
    assert GPT_OSS_ON_CANN[lang] in text
    # A link from the H100's F16 report does not carry F16 to the Atlas, where the page opens under vLLM.
    h100 = client.get(url("gpt-oss-20b", "h100-80gb-sxm", lang, query="quant=F16")).content.decode()
    assert set(re.findall(r'href="(/[a-z]+/report/gpt-oss-20b/atlas-300i-duo-96gb/[^"]*)"', h100)) == {
        url("gpt-oss-20b", "atlas-300i-duo-96gb", lang)}
    # The accelerator's table (llama.cpp by default) marks the row it sized under vLLM.
    table = text_of(client, f"/{lang}/hardware/atlas-300i-duo-96gb/")
    row = table[table.index("gpt-oss-20b"):][:200]
    assert "FP16 " + {"en": "vLLM: llama.cpp runs no format of this model here",
                      "de": "vLLM: llama.cpp führt hier kein Format dieses Modells aus"}[lang] in row


def test_a_fit_option_that_still_does_not_run_quotes_no_speed(client):
    """An option that still exceeds was quoted at a speed (GLM-5 on a Ryzen AI Max+ 395: ~8.35 tok/s) on a page that
    says the configuration does not run. Llama 3.1 8B at 128K under vLLM on an RTX 4090: the 8-bit cache closes
    most of the gap but not all of it."""
    text = text_of(client, url("llama-3-1-8b-instruct", "rtx-4090",
                               query="engine=vllm&quant=BF16&kv_dtype=auto&context=131072"))
    end = text.index("Recommended hardware")
    block = text[text.rindex("What to change to fit", 0, end):end]
    option = block[block.index("8-bit KV cache"):]
    assert "it still does not run" in option and "tok/s" not in option


def test_tensor_parallel_weights_explain_the_replicated_share(client):
    """Qwen3-Next on 2 × H100 under vLLM: "Model weights 45.34 GiB" in the bar, "= 45.15 GiB" in the derivation;
    the 0.19 GiB that every rank holds whole were not explained."""
    _, catalog = current_catalog()
    scenario = Scenario(gpus=2, context=32768, engine="vllm")
    tp = plan_memory(catalog.model("qwen3-next-80b-a3b-instruct"), catalog.hardware["h100-80gb-sxm"],
                     scenario).tensor_parallel
    assert tp.per_rank_bytes == pytest.approx((tp.sharded_bytes) / 2 + tp.replicated_bytes)
    text = text_of(client, url("qwen3-next-80b-a3b-instruct", "h100-80gb-sxm",
                               query="gpus=2&context=32768&engine=vllm&quant=Q4_K_M"))
    assert (f"keeps {tp.replicated_bytes / GIB:.2f} GiB of them (norms, routers and other small tensors) whole on "
            f"every GPU: {tp.per_rank_bytes / GIB:.2f} GiB per GPU, {tp.all_ranks_bytes / GIB:.2f} GiB in all.") in text
    assert f"Model weights: {tp.all_ranks_bytes / GIB:.2f} GiB" in text


def test_cann_hardware_pages_choose_from_the_formats_the_backend_runs(client):
    """Every Ascend page said "0 of 82 fit" once the K-quants no longer ran there: the ladder started at Q2_K."""
    text = text_of(client, "/en/hardware/ascend-910b-64gb/")
    assert "of 83 open-weight LLMs fit" in text and " 0 of 83 open-weight" not in text
    assert "the highest-quality format of Q8_0, Q4_0 that fits" in text
    atlas = text_of(client, "/en/hardware/atlas-300i-duo-96gb/")
    assert "the highest-quality format of F16 that fits" in atlas and " 0 of 83 open-weight" not in atlas


def test_vllm_with_a_queue_keeps_required_for_all_sequences_and_no_system_ram(client):
    """Llama 3.1 8B BF16 at 32K, batch 64, on an RTX 4090 under vLLM: the card read "20.93 GiB on the GPU, 252.00 GiB
    in system RAM (llama.cpp keeps …)" beside "Tight headroom"."""
    text = text_of(client, url("llama-3-1-8b-instruct", "rtx-4090",
                               query="engine=vllm&quant=BF16&context=32768&batch=64"))
    card = text[text.index("Required memory"):text.index("Speed and cost")]
    assert "in system RAM" not in card
    assert re.search(r"for all 64 sequences at full context at once; vLLM's KV pool holds 1 of them at a time "
                     r"\(the rest wait\); it starts with [\d.]+ GiB on the fullest GPU \(one full-context sequence\)", card)


def test_an_explicit_offload_that_still_exceeds_reads_as_not_running(client):
    text = text_of(client, url("llama-3-3-70b-instruct", "rtx-4090", query="offload=10"))
    assert "it still runs" not in text
    assert "it does not run as configured" in text
    assert "nothing can move to system RAM" not in text
    assert "Moving more to system RAM, or an automatic offload, makes it run." in text


def test_a_format_the_backend_does_not_run_is_not_called_a_fit(client):
    text = text_of(client, url("qwen3-8b", "atlas-300i-duo-96gb", query="quant=Q4_K_M"))
    assert "The memory would hold it, but Q4_K_M does not run here" in text
    assert "Fits with safe headroom" not in text and "leaving" not in text.split("Engineering notes")[1][:300]
    compare = text_of(client, "/en/compare/qwen3-8b/?hw=atlas-300i-duo-96gb&hw=rtx-4090")
    assert "format not supported" in compare


def test_a_tied_head_left_in_system_ram_runs(client):
    """Gemma 3 12B BF16 on an RTX 4090: llama.cpp's automatic offload leaves only the tied output head in system RAM
    (-ngl 48, 0 bytes of offloaded weights) and fits; the page said it does not run."""
    _, catalog = current_catalog()
    plan = plan_memory(catalog.model("gemma-3-12b-it"), catalog.hardware["rtx-4090"], Scenario(quant="BF16"))
    assert plan.fit.verdict == "exceeds" and plan.placement.mode == "auto" and plan.placement.offloaded_bytes == 0
    assert plan.runs
    text = text_of(client, url("gemma-3-12b-it", "rtx-4090", query="quant=BF16"))
    assert "it does not run there" not in text and "unified memory, or vLLM" not in text


def test_an_explicit_offload_of_an_estimated_moe_is_not_free():
    """Without shapes the pseudo-block's "experts" are the bytes a token does not read: moving them first made
    --offload-pct 30 decode faster than the automatic offload (Qwen3.6 35B-A3B, then without shapes, on an RTX 5080:
    471 vs 107 tok/s). ERNIE 4.5 21B-A3B has no shapes either."""
    _, catalog = current_catalog()
    model, card = catalog.model("ernie-4-5-21b-a3b"), catalog.hardware["rtx-5080"]
    assert not model.has_shapes
    automatic = catalog.estimate(model, card, Scenario())
    explicit = catalog.estimate(model, card, Scenario(offload_pct=30))
    assert explicit.placement.offloaded_bytes > automatic.placement.offloaded_bytes
    assert explicit.decode.tokens_per_s < automatic.decode.tokens_per_s
    assert explicit.decode.weight_bytes_ram > 0


def test_cloud_and_recommendations_hold_the_model_without_the_visitors_offload(client):
    """Llama 3.3 70B on an RTX 4090 with offload=10: the RTX PRO 6000 was priced at ~10.1 tok/s, a third of the
    ~32.9 tok/s it has holding the model."""
    _, catalog = current_catalog()
    pro = catalog.estimate(catalog.model("llama-3-3-70b-instruct"), catalog.hardware["rtx-pro-6000-blackwell"],
                           Scenario(depth=4096))  # a token is priced with half the context cached (cost_depth)
    with translation.override("en"):
        speed = toks(pro.decode.tokens_per_s)  # ~32 tok/s: three significant digits, as the page writes it
    text = text_of(client, url("llama-3-3-70b-instruct", "rtx-4090", query="offload=10"))
    assert f"RTX PRO 6000 Blackwell at $0.66/h ({speed} there)" in text
    # The best single accelerator to buy (since its price is sourced, an RTX 6000 Ada) at its own speed holding it.
    best = catalog.recommendations(catalog.model("llama-3-3-70b-instruct"), Scenario()).best_single.choice.hardware
    on_best = catalog.estimate(catalog.model("llama-3-3-70b-instruct"), best, Scenario())
    assert on_best.placement.offloaded_bytes == 0
    assert (f"{best.name} {best.memory_gb:g} GB · ~${best.price_usd:,.0f} · ~{on_best.decode.tokens_per_s:.1f} tok/s"
            in text)


def test_notes_state_the_gpu_shortfall_from_figures_the_reader_can_subtract(client):
    """"419.08 GiB needed; it lacks 175.35 GiB" did not subtract (419.08 − 243.2 = 175.88): the shortfall is the
    GPU's demand, 418.55 GiB, less its usable memory."""
    text = text_of(client, url("glm-5", "instinct-mi325x-256gb"))
    m = re.search(r"the GPU would need ([\d.,]+) GiB and has ([\d.]+) GiB usable: ([\d.]+) GiB more", text)
    need, usable, more = (float(v.replace(",", "")) for v in m.groups())
    assert need - usable == pytest.approx(more, abs=0.011)


@pytest.mark.parametrize("lang, hardware, loaded, note, derivation", [
    ("en", "a100-80gb-sxm", 65.90,
     "vLLM's Marlin MoE kernel holds the MXFP4 experts padded (the intermediate size to a multiple of 128, the "
     "hidden size to a multiple of 256): 5.13 GiB more than the checkpoint's 60.77 GiB.",
     "vLLM's Marlin MoE kernel needs 5.13 GiB more for its layout of the MXFP4 experts, 65.90 GiB loaded."),
    ("de", "a100-80gb-sxm", 65.90,
     "Der Marlin-MoE-Kernel von vLLM hält die MXFP4-Experten aufgefüllt (die Zwischengröße der Experten auf ein "
     "Vielfaches von 128, die Hidden Size auf ein Vielfaches von 256): 5,13 GiB mehr als die 60,77 GiB des "
     "Checkpoints.",
     "Das Layout der MXFP4-Experten in vLLMs Marlin-MoE-Kernel braucht 5,13 GiB mehr, 65,90 GiB geladen."),
    ("en", "h100-80gb-sxm", 64.30,
     "vLLM's Triton MoE kernel keeps the MXFP4 experts' scales twice (swizzled, in rows padded to a multiple of 256, "
     "and as in the checkpoint) and their biases in fp32: 3.53 GiB more than the checkpoint's 60.77 GiB.",
     "vLLM's Triton MoE kernel needs 3.53 GiB more for its layout of the MXFP4 experts, 64.30 GiB loaded."),
    ("de", "h100-80gb-sxm", 64.30,
     "vLLMs Triton-MoE-Kernel hält die Skalen der MXFP4-Experten doppelt (umsortiert in Zeilen, die auf ein "
     "Vielfaches von 256 aufgefüllt sind, und wie im Checkpoint) und ihre Biases in FP32: 3,53 GiB mehr als die "
     "60,77 GiB des Checkpoints.",
     "Das Layout der MXFP4-Experten in vLLMs Triton-MoE-Kernel braucht 3,53 GiB mehr, 64,30 GiB geladen."),
])
def test_vllm_counts_the_mxfp4_expert_layout_it_loads(client, lang, hardware, loaded, note, derivation):
    """gpt-oss-120b on one GPU under vLLM: an A100 loads Marlin's padding (65.9651 GiB on an H100 under v0.10.1,
    vllm-project/vllm#23278), an H100 under the modelled version Triton's layout (64.38 GiB under v0.14.1,
    vllm-project/vllm#33155); the page once sized the checkpoint's 60.77 GiB and said "tight" where vLLM did not
    start."""
    _, catalog = current_catalog()
    result = catalog.estimate(catalog.model("gpt-oss-120b"), catalog.hardware[hardware],
                              Scenario(engine="vllm", quant="MXFP4", kv_dtype="auto"))
    assert result.memory.weights_loaded_bytes / GIB == pytest.approx(loaded, abs=0.005)
    text = text_of(client, url("gpt-oss-120b", hardware, lang, query="engine=vllm&quant=MXFP4&kv_dtype=f16"))
    assert note in text and derivation in text
    gguf = text_of(client, url("gpt-oss-120b", hardware, lang))  # llama.cpp holds the GGUF as it is
    assert "MXFP4" in gguf and "Marlin" not in gguf and "Triton" not in gguf


def test_tensor_parallel_derivation_counts_the_mxfp4_padding_once(client):
    """gpt-oss-120b on 2 × H100 under vLLM: the split sentence read "34.32 GiB per GPU, 68.64 GiB in all" (padding
    included) and the padding sentence then added 3.91 GiB per GPU to the same 68.64 GiB."""
    _, catalog = current_catalog()
    result = catalog.estimate(catalog.model("gpt-oss-120b"), catalog.hardware["h100-80gb-sxm"],
                              Scenario(engine="vllm", quant="MXFP4", kv_dtype="auto", gpus=2))
    tp = result.memory.tensor_parallel
    text = text_of(client, url("gpt-oss-120b", "h100-80gb-sxm", query="engine=vllm&quant=MXFP4&kv_dtype=f16&gpus=2"))
    split = (f"{tp.per_rank_checkpoint_bytes / GIB:.2f} GiB per GPU, {tp.all_ranks_checkpoint_bytes / GIB:.2f} GiB "
             "in all.")
    padded = (f"needs {tp.per_rank_padding_bytes / GIB:.2f} GiB more per GPU for its layout of the MXFP4 experts, so "
              f"each GPU loads {tp.per_rank_bytes / GIB:.2f} GiB, {tp.all_ranks_bytes / GIB:.2f} GiB in all.")
    assert split in text and padded in text
    assert tp.per_rank_checkpoint_bytes + tp.per_rank_padding_bytes == tp.per_rank_bytes


@pytest.mark.parametrize("lang", ["en", "de"])
def test_a_model_without_layer_shapes_launches_with_every_layer_on_the_gpu(client, lang):
    """An estimated model has one pseudo-block: its launch command read "-ngl 2" (llama.cpp would put 2 of ~32
    layers on the GPU) while the page quoted the all-on-GPU speed."""
    text = text_of(client, url("qwen3-5-9b", "rtx-4090", lang))
    assert "-ngl 999" in text and "-ngl 2 " not in text
    offloaded = text_of(client, url("ernie-4-5-300b-a47b", "rtx-4090", lang))
    assert "-ngl 999" in offloaded
    assert ("lower -ngl until llama.cpp loads" if lang == "en" else "Senken Sie -ngl, bis llama.cpp") in offloaded
    # A model with shapes and an explicit offload knows its layer count: no such note.
    shaped = text_of(client, url("llama-3-1-8b-instruct", "rtx-4090", lang, query="offload=30"))
    assert ("lower -ngl until" if lang == "en" else "Senken Sie -ngl, bis") not in shaped
    # A format llama.cpp does not load keeps the note too (BF16 of a model without shapes that does not fit).
    bf16 = text_of(client, url("devstral-small-24b", "rtx-4090", lang, query="engine=vllm&quant=BF16&kv_dtype=f16"))
    assert ("lower -ngl until" if lang == "en" else "Senken Sie -ngl, bis") in bf16


def test_vllm_without_a_hugging_face_id_serves_a_local_directory(client):
    """vllm serve <catalog slug> would look the slug up on the Hugging Face Hub and fail."""
    # Qwen3.5 9B has no repository in the catalog; vLLM sizes it with its family member's shapes (estimated).
    text = text_of(client, url("qwen3-5-9b", "h100-80gb-sxm", query="engine=vllm&quant=BF16&kv_dtype=f16"))
    assert "vllm serve ./qwen3-5-9b" in text
    assert "The catalog knows no Hugging Face repository for this model" in text
    named = text_of(client, url("gemma-4-26b-a4b-it", "h100-80gb-sxm", query="engine=vllm&quant=BF16&kv_dtype=f16"))
    assert "vllm serve google/gemma-4-26B-A4B-it" in named
    gguf = text_of(client, url("qwen3-5-9b", "h100-80gb-sxm", query="engine=vllm&quant=Q4_K_M&kv_dtype=f16"))
    assert "add --tokenizer with the original model's repository or directory" in gguf
    awq = text_of(client, url("qwen3-5-9b", "h100-80gb-sxm", query="engine=vllm&quant=AWQ&kv_dtype=f16"))
    assert "The catalog names no AWQ or GPTQ checkpoint of this model" in awq and "local checkpoint directory" not in awq
    # vLLM reads the method from the checkpoint: --quantization awq would force the slow generic kernel.
    assert "vllm serve ./qwen3-5-9b-AWQ" in awq and "--quantization" not in awq


def test_kv_derivation_names_the_windowed_layers_per_token_bytes(client):
    """Gemma 4 26B-A4B read "20,480 bytes per token" while its 25 sliding layers hold 204,800 B per token of their
    window (ollama#16958's 3.00 GB at 128K is both together)."""
    text = text_of(client, url("gemma-4-26b-a4b-it", "rtx-4090", query="context=131072"))
    assert ("20,480 bytes per token at f16 in the layers that keep the whole context, for 1 × 131,072 tokens; the "
            "windowed layers add 204,800 bytes per token for the tokens they keep (the table's cached tokens).") in text
    dense = text_of(client, url("llama-3-1-8b-instruct", "rtx-4090"))
    assert "131,072 bytes per token at f16, for 1 × 8,192 tokens." in dense


@pytest.mark.parametrize("lang", ["en", "de"])
def test_an_explicit_offload_launches_with_the_flags_it_is_priced_for(client, lang):
    """?offload=30 priced 30 % of the weights in system RAM while the command kept -ngl 999 with no flag moving
    them: the page's speed was not the command's. The share is now whole layers, and the command carries them."""
    _, catalog = current_catalog()
    card = catalog.hardware["rtx-4090"]
    moe = catalog.estimate(catalog.model("qwen3-30b-a3b-instruct-2507"), card, Scenario(offload_pct=30))
    assert moe.placement.n_cpu_moe and moe.placement.gpu_layers == len(moe.memory.layout.blocks) + 1
    share = moe.placement.offloaded_weight_bytes / moe.memory.layout.file_bytes
    assert 0.30 <= share < 0.30 + 1 / len(moe.memory.layout.blocks)  # rounded up by less than one layer
    text = text_of(client, url("qwen3-30b-a3b-instruct-2507", "rtx-4090", lang, query="offload=30"))
    assert f"--n-cpu-moe {moe.placement.n_cpu_moe}" in text and "-ngl 999" not in text
    dense = catalog.estimate(catalog.model("llama-3-1-8b-instruct"), card, Scenario(offload_pct=30))
    assert dense.placement.n_cpu_moe is None and dense.placement.gpu_layers < 33
    assert dense.placement.offloaded_kv_bytes > 0  # the layers in RAM keep their KV there
    text = text_of(client, url("llama-3-1-8b-instruct", "rtx-4090", lang, query="offload=30"))
    assert f"-ngl {dense.placement.gpu_layers}" in text


def test_the_lead_tells_a_chosen_offload_from_one_that_is_needed(client):
    """With 30 % of the weights moved by the visitor's choice, Qwen3-30B-A3B fits a 24 GB card with room to spare:
    the lead once said "more than its memory" for any offload."""
    chosen = text_of(client, url("qwen3-30b-a3b-instruct-2507", "rtx-3090", query="offload=30"))
    assert "you chose to keep in system RAM" in chosen and "more than its memory" not in chosen
    needed = text_of(client, url("qwen3-235b-a22b-instruct-2507", "rtx-3090"))
    assert "more than its memory: with" in needed
    german = text_of(client, url("qwen3-30b-a3b-instruct-2507", "rtx-3090", lang="de", query="offload=30"))
    assert "die Sie im System-RAM halten" in german


def test_rtx_pro_6000_has_a_prompt_speed(client):
    """Its dense FP16 peak is derived as the speed calibration derives it (188 SMs × 1024 × 2.617 GHz = 503.8 TFLOPS,
    full rate with FP32 accumulate on a professional part), so prefill and TTFT are no longer "not published"."""
    text = text_of(client, url("gpt-oss-120b", "rtx-pro-6000-blackwell"))
    assert "no published FP16 TFLOPS" not in text
    assert re.search(r"TTFT for a 4K prompt: ~?[\d,.]+ (ms|s)", text)


@pytest.mark.parametrize("lang, expected", [("en", "it exceeds the memory of 8 × H100 80GB SXM"),
                                            ("de", "8 × H100 80GB SXM")])
def test_answers_about_several_gpus_name_them_all(client, lang, expected):
    """DeepSeek-V3 FP8 on 8 × H100 does not start under vLLM: the FAQ said it exceeds "the memory of H100 80GB SXM";
    the unified-memory card named the DGX Spark as the largest machine although the Macs are larger (vLLM runs on
    none of them), and an MI355X was "the largest single discrete GPU"."""
    text = text_of(client, url("deepseek-v3-0324", "h100-80gb-sxm", lang, "gpus=8&engine=vllm&quant=FP8"))
    assert expected in text
    if lang == "en":
        assert "Exceeds the largest unified-memory machine vLLM runs on (DGX Spark" in text
        assert "discrete GPU" not in text


@pytest.mark.parametrize("lang, pattern", [
    ("en", r"vLLM takes ([\d.]+) GiB of each GPU at start-up \( --gpu-memory-utilization 0\.9 \) besides the ([\d.]+) GiB "
           r"of its device context, so a monitor shows ([\d.]+) GiB in use: it fills the ([\d.]+) GiB .*? a pool of ([\d,]+) "
           r"tokens"),
    ("de", r"vLLM belegt beim Start ([\d,]+) GiB jeder GPU .*? ein Pool von ([\d.]+) Tokens"),
])
def test_a_vllm_page_shows_what_vllm_reserves_and_its_kv_pool(client, lang, pattern):
    """vLLM takes gpu_memory_utilization × the GPU at start-up and fills the rest with KV blocks: a page that showed
    only "16 GiB required, 67 % utilization" disagreed with what nvidia-smi shows; the pool was computed, not shown."""
    _, catalog = current_catalog()
    model, hardware = catalog.model("gpt-oss-20b"), catalog.hardware["rtx-4090"]
    result = estimate(model, hardware, Scenario(engine="vllm", quant="MXFP4"))
    text = text_of(client, url("gpt-oss-20b", "rtx-4090", lang, "engine=vllm"))
    match = re.search(pattern, text)
    assert match
    if lang == "en":
        reserved, context, in_use, available, tokens = match.groups()
        assert float(reserved) == round(result.memory.runtime.preallocated_bytes / GIB, 2)
        # The CUDA context (300 MiB) lies outside the budget; a monitor shows both, which is the usable memory.
        assert (float(context), float(in_use)) == (0.29, round(result.memory.runtime.preallocated_bytes / GIB + 0.29297, 2))
        assert float(in_use) == round(result.fit.usable_bytes_per_gpu / GIB, 2)
        assert float(available) == round(result.memory.runtime.capacity.available_bytes / GIB, 2)
        assert int(tokens.replace(",", "")) == result.kv_tokens_capacity
    else:
        assert int(match.group(2).replace(".", "")) == result.kv_tokens_capacity


@pytest.mark.parametrize("hardware", ["gaudi-3-128gb", "h100-80gb-sxm"])
def test_weights_beyond_the_gpu_fail_to_load_instead_of_being_reserved(client, hardware):
    """DeepSeek-V3.2 under vLLM on one GPU: 627.71 GiB of weights per rank. The Gaudi page said vLLM takes
    629.69 GiB of a 128 GB card at start-up (its reservation is weights + activations + a share of what is free);
    the H100 page that no KV block fits. vLLM runs out of memory while loading the weights, before either."""
    query = "engine=vllm" if hardware == "h100-80gb-sxm" else ""
    text = text_of(client, url("deepseek-v3-2", hardware, query=query))
    _, catalog = current_catalog()
    runtime = plan_memory(catalog.model("deepseek-v3-2"), catalog.hardware[hardware],
                          Scenario(engine="vllm", quant="FP8")).runtime
    assert runtime.weights_exceed_device and runtime.preallocated_bytes <= runtime.device_memory_bytes
    assert (f"The weights alone take {runtime.weights_per_gpu_bytes / GIB:.2f} GiB of each GPU, more than its "
            f"{runtime.device_memory_bytes / GIB:.2f} GiB: vLLM fails while loading them") in text
    assert "of each GPU at start-up" not in text


def test_more_gpus_than_a_server_are_pipeline_stages_under_vllm(client):
    """16 × H100: two servers of 8 (HGX), which vLLM runs as 2 pipeline stages of tensor parallelism 8, not as one
    tensor-parallel group of 16 over NVLink (there is none between servers). The stages take turns on a token: one
    stream decodes as on 8 GPUs."""
    from reports.sizing.estimate import vllm_parallel_sizes

    assert [vllm_parallel_sizes(n) for n in (1, 2, 8, 16, 24, 12)] == [(1, 1), (2, 1), (8, 1), (16 // 2, 2), (8, 3),
                                                                       (12, 1)]
    _, catalog = current_catalog()
    model, h100 = catalog.model("llama-3-1-8b-instruct"), catalog.hardware["h100-80gb-sxm"]
    on = {gpus: estimate(model, h100, Scenario(engine="vllm", quant="BF16", gpus=gpus)) for gpus in (8, 16)}
    # Within 1 %: the weights' split over all 16 replicates the small tensors on every rank, which the reads count.
    assert on[16].decode.tokens_per_s == pytest.approx(on[8].decode.tokens_per_s, rel=0.01)
    # The KV cache is the stages': every layer on the 8 ranks of its stage, half the layers on each GPU.
    assert on[16].kv.total_bytes == on[8].kv.total_bytes and on[16].kv.per_rank_bytes == on[8].kv.per_rank_bytes / 2
    text = text_of(client, url("deepseek-v3-0324", "h100-80gb-sxm", query="gpus=16&engine=vllm&quant=FP8"))
    assert "--tensor-parallel-size 8 \\ --pipeline-parallel-size 2" in " ".join(text.split())
    assert "16 GPUs are 2 servers of 8" in text and "--tensor-parallel-size 16" not in text
    deepseek = estimate(catalog.model("deepseek-v3-0324"), h100, Scenario(engine="vllm", quant="FP8", gpus=16))
    assert (f"vLLM runs the 16 GPUs as 2 pipeline stages of 8: the rows are one tensor-parallel rank's cache of every "
            f"layer, and their sizes the cache of all stages; each GPU holds the layers of its own stage, "
            f"{deepseek.kv.per_rank_bytes / GIB:.2f} GiB for the sequence at full context.") in text
    assert "replicated on 2 ranks" not in text


@pytest.mark.parametrize("lang, sentence", [
    ("en", "The model card counts 3.6 B active: it leaves out the input embedding"),
    ("de", "Die Modellkarte nennt 3,6 Mrd. aktive Parameter: Sie lässt das Eingabe-Embedding weg"),
])
def test_the_lead_says_why_a_cards_active_count_differs(client, lang, sentence):
    """gpt-oss-20b: 4.19 B active here (embedding included, as DeepSeek's and Qwen's cards count), 3.6 B on OpenAI's
    card, which leaves the input embedding out (201,088 × 2,880 = 0.58 B): the page says so, and only where that
    is the difference."""
    assert sentence in text_of(client, url("gpt-oss-20b", "rtx-4090", lang))
    assert "The model card counts" not in text_of(client, url("deepseek-v3-0324", "h100-80gb-sxm"))


def test_the_largest_macs_have_a_prompt_speed(client):
    """The M3 Ultra Macs had no FP16 TFLOPS, so no prefill and no time to the first token, while the smaller M4 Max
    had one derived by the same rule (cores × 128 ALUs × 2 × clock) that predicts the M3 Ultra's measured pp512
    within 5 % (bench/accuracy.py): at 32K a Mac's prompt time is what decides."""
    _, catalog = current_catalog()
    assert catalog.hardware["mac-studio-m3-ultra-512gb"].fp16_tflops == pytest.approx(80 * 128 * 2 * 1.398e9 / 1e12,
                                                                                      abs=0.005)
    text = text_of(client, url("llama-3-3-70b-instruct", "mac-studio-m3-ultra-512gb", query="context=32768"))
    assert re.search(r"Prefill ~[\d,.]+ tok/s", text) and "Prefill speed and TTFT are unknown" not in text


@pytest.mark.parametrize("lang, headline", [
    ("en", "Exceeds available GPU memory: runs with 111.81 GiB in system RAM"),
    ("de", "Überschreitet den verfügbaren GPU-Speicher: läuft mit 111,81 GiB im System-RAM"),
])
def test_an_automatic_offload_says_it_runs_beside_the_verdict(client, lang, headline):
    """Qwen3-235B-A22B at Q4_K_M on an RTX 4090: the banner and the FAQ said only "Exceeds available GPU memory"
    above a page that runs it at ~7 tok/s with llama.cpp's automatic offload."""
    _, catalog = current_catalog()
    plan = plan_memory(catalog.model("qwen3-235b-a22b-instruct-2507"), catalog.hardware["rtx-4090"], Scenario())
    assert plan.fit.verdict == "exceeds" and plan.runs and plan.placement.automatic_offload
    text = text_of(client, url("qwen3-235b-a22b-instruct-2507", "rtx-4090", lang))
    assert text.count(headline) == 2  # the banner and the FAQ's answer
    gemma = text_of(client, url("gemma-3-27b-it", "rtx-4090", lang))  # fits: the verdict alone
    assert "runs with" not in gemma and "läuft mit" not in gemma


def test_the_unified_memory_card_is_not_named_after_one_vendor(client):
    """It recommends the cheapest unified-memory machine that holds the model, a Ryzen AI Max or a DGX Spark as
    often as a Mac: its heading said "Apple / unified memory" above a Ryzen box."""
    text = text_of(client, url("llama-3-3-70b-instruct", "mac-studio-m3-ultra-512gb", query="context=32768"))
    card = text[text.index("Unified memory", text.index("Recommended hardware")):][:200]
    assert "Apple / unified memory" not in text and "Ryzen AI Max" in card


def test_vllm_starts_exactly_when_its_pool_holds_one_request(client):
    """vLLM starts when its KV pool, sized from gpu_memory_utilization × total less the weights, the activation peak,
    non-torch memory and (from v0.21) the graphs, holds one request at max_model_len. The verdict also counted the
    device context, which lives in the (1 − utilization) rest: Llama 3.3 70B BF16 on 2 × A100 read "does not run"
    beside "a pool of 9,056 tokens, 1.1 sequences at 8K"."""
    _, catalog = current_catalog()
    cases = [("llama-3-3-70b-instruct", "a100-80gb-sxm", 2, "BF16", 8192),
             ("gpt-oss-120b", "rtx-4090", 4, "MXFP4", 8192), ("qwen3-32b", "rtx-4090", 1, "AWQ", 32768),
             ("llama-3-1-8b-instruct", "rtx-3060-12gb", 1, "BF16", 16384), ("qwen3-14b", "l4-24gb", 1, "BF16", 4096)]
    for model, gpu, gpus, quant, context in cases:
        plan = plan_memory(catalog.model(model), catalog.hardware[gpu],
                           Scenario(engine="vllm", quant=quant, gpus=gpus, context=context))
        pool = plan.runtime.capacity
        assert (plan.fit.verdict != "exceeds") == (pool.max_concurrency >= 1), (model, gpu, pool.max_concurrency)
    text = text_of(client, url("llama-3-3-70b-instruct", "a100-80gb-sxm", query="gpus=2&engine=vllm&quant=BF16"))
    assert "a pool of 9,056 tokens" in text and "does not run" not in text


def test_an_offload_without_layer_shapes_runs_when_it_lands_on_the_usable_bytes():
    """A model known by its parameters only moves exactly the excess to system RAM (fit._continuous_offload); the
    float sum of the GPU's load landed 4e-15 above the usable bytes on some cards, so Step-3.5 Flash ran on an RTX
    4090 but not on a 5090 (and DeepSeek-V4.1 Flash the other way round), with no speed on the hardware pages.
    Step-3.5 Flash has its config.json now; Step-3.7 Flash is still known by its stated parameters only."""
    _, catalog = current_catalog()
    for slug in ("step-3-7-flash-198b-a11b", "deepseek-v4-1-flash-552b-a16b"):
        for gpu in ("rtx-4090", "rtx-5090"):
            plan = plan_memory(catalog.model(slug), catalog.hardware[gpu], Scenario())
            assert plan.placement.mode == "auto" and plan.runs, (slug, gpu)
            assert plan.placement.per_gpu_bytes == pytest.approx(plan.fit.usable_bytes_per_gpu, rel=1e-12)


def test_minimax_m2_1_opens_at_its_fp8_release_under_vllm(client):
    """The catalog's config.json of MiniMax-M2.1 is a bf16 re-upload, so vLLM opened it at BF16 (426 GiB, 'does not
    run' on 4 × H100) while its FP8 sibling M2.5 opened at FP8; the release is FP8 (SGLang serves it on 4 × 96 GB)."""
    _, catalog = current_catalog()
    assert catalog.model("minimax-m2-1").native_dtype == catalog.model("minimax-m2-5").native_dtype == "fp8"
    text = text_of(client, url("minimax-m2-1", "h100-80gb-sxm", query="engine=vllm&gpus=4"))
    assert "vllm serve MiniMaxAI/MiniMax-M2.1" in text and "Fits" in text


@pytest.mark.parametrize("lang, sentence", [
    ("en", "in the methodology's checks this estimate was up to 2.6 × the measured speed"),
    ("de", "lag diese Schätzung bei bis zum 2,6-Fachen der gemessenen Geschwindigkeit"),
])
def test_vllm_moe_pages_say_how_far_their_decode_checks_were_off(client, lang, sentence):
    """Single-request vLLM decode of mixture-of-experts models ran up to 2.6 × slower than estimated in
    bench/vllm_decode_accuracy.py (gpt-oss-20b on an MI300X); the pages of such models under vLLM say so, with the
    snapshot's figure, and dense models' pages do not."""
    from reports.methodology import accuracy

    ratio = accuracy().vllm_decode_summary["moe_max_ratio"]
    assert round(ratio, 1) == 2.6
    assert sentence in text_of(client, url("deepseek-v3-0324", "h200-141gb-sxm", lang, "engine=vllm&gpus=8"))
    dense = text_of(client, url("qwen3-8b", "h100-80gb-sxm", lang, "engine=vllm"))
    assert "2.6 ×" not in dense and "2,6-Fachen" not in dense


def test_the_pool_counts_sequences_as_the_queue_does():
    """A pool of 4.99 full-context sequences read "5.0 sequences" beside "holds 4 of the 8 sequences at a time"."""
    from reports.report import ReportPage

    class Capacity:
        max_concurrency = 4.99

    page = ReportPage.__new__(ReportPage)
    page.estimate = type("E", (), {"runtime": type("R", (), {"capacity": Capacity()})()})()
    assert page.vllm_pool_sequences == 4.9


def test_a_bf16_page_does_not_call_its_llama_cpp_line_a_stand_in(client):
    """llama.cpp writes and loads BF16 GGUFs (convert_hf_to_gguf --outtype bf16): the note "llama.cpp loads GGUF files
    only: … the llama.cpp line shows the GGUF equivalent" stood under a BF16 page's llama.cpp command; an FP16 release's
    GGUF is F16 (the line named a file "FP16", which llama.cpp has no type for)."""
    from reports.sizing.estimate import GGUF_OF_NATIVE_FORMAT

    assert GGUF_OF_NATIVE_FORMAT["FP16"] == "F16"
    text = text_of(client, url("llama-3-1-8b-instruct", "h100-80gb-sxm", query="engine=vllm&quant=BF16"))
    assert "llama-server -m ./llama-3-1-8b-instruct-BF16.gguf" in text
    assert "the llama.cpp line shows the GGUF equivalent" not in text


@pytest.mark.parametrize("lang, pool, lead, share_note", [
    ("en", "a pool of 4,496 tokens, less than one request of 8,192 tokens, so vLLM refuses --max-model-len 8192",
     "more than the 39.89 GiB vLLM can use at --gpu-memory-utilization 0.5 : it does not start with that share, but "
     "does with a larger one (at most 0.99)",
     "the launch line asks for --gpu-memory-utilization 0.78 , not 0.9"),
    ("de", "ein Pool von 4.496 Tokens, weniger als eine Anfrage von 8.192 Tokens, also lehnt vLLM --max-model-len 8192 "
           "ab",
     "mehr als die 39,89 GiB, die vLLM bei --gpu-memory-utilization 0.5 nutzen kann: Mit diesem Anteil startet es nicht, "
     "mit einem größeren schon (höchstens 0.99)",
     "Die Startzeile verlangt --gpu-memory-utilization 0.78 , nicht 0.9"),
])
def test_vllm_pages_say_what_its_memory_share_does(client, lang, pool, lead, share_note):
    """The review of the share field: the pool sentence read "0.5 sequences at 8K" under a verdict that vLLM does not
    start; the lead blamed the H100 ("more than it holds") for what a share of 0.5 did; a DGX Spark page launched
    vLLM at 0.9, more than the system leaves free, beside a verdict counted from less."""
    seventy = "llama-3-3-70b-instruct"
    text = text_of(client, url(seventy, "h100-80gb-sxm", lang,
                               query="engine=vllm&quant=FP8&gpu_memory_utilization=0.92"))
    assert pool in text
    text = text_of(client, url("gpt-oss-120b", "h100-80gb-sxm", lang, query="engine=vllm&gpu_memory_utilization=0.5"))
    assert lead in text
    text = text_of(client, url("llama-3-1-8b-instruct", "dgx-spark-gb10-128gb", lang,
                               query="engine=vllm&quant=BF16&kv_dtype=auto"))
    assert share_note in text
    assert "vllm serve meta-llama/Llama-3.1-8B-Instruct \\ --max-model-len 8192 \\ --gpu-memory-utilization 0.78" in text


def test_the_compare_page_links_each_column_in_its_configuration_and_prices_vllms_share(client):
    path = "/en/compare/llama-3-3-70b-instruct/?engine=vllm&quant=FP8&hw=h100-80gb-sxm&hw=a100-80gb-sxm:2"

    def page(share: str) -> str:
        return client.get(f"{path}&gpu_memory_utilization={share}").content.decode()

    at_08, at_09 = page("0.8"), page("0.9")
    links = re.findall(r'<th scope="col" class="num"><a href="([^"]+)"', at_08)
    assert len(links) == 2 and all("engine=vllm" in link and "quant=FP8" in link
                                   and "gpu_memory_utilization=0.8" in link for link in links)
    assert "gpus=2" in links[1]
    price = re.compile(r"Price per usable GiB.*?\$([\d,.]+)", re.S)
    assert float(price.search(at_08).group(1).replace(",", "")) > float(price.search(at_09).group(1).replace(",", ""))


@pytest.mark.parametrize("path", [
    "/en/report/llama-3-1-8b-instruct/rtx-4090/?quant=Q4_K_M&engine=vllm&gpu_memory_utilization=0.98",
    "/de/report/qwen3-8b/rtx-4090/?engine=vllm&quant=AWQ&gpu_memory_utilization=0.98",
    "/en/report/qwen3-8b/h100-80gb-sxm/?quant=Q4_K_M&engine=vllm&gpu_memory_utilization=0.99",
])
def test_a_share_some_catalog_cards_refuse_still_renders_the_page(client, path):
    """0.98 and 0.99 are valid on these cards but not on smaller ones the recommendations and the matrix search:
    the page answered 500 when one of them was sized."""
    assert client.get(path).status_code == 200


def test_the_context_filter_groups_sizes_without_a_short_form(client):
    from reports.templatetags.fmt import ctx
    from django.utils import translation
    with translation.override("en"):
        assert (ctx(8192), ctx(68864), ctx(128000)) == ("8K", "68,864", "128K")
    with translation.override("de"):
        assert ctx(68864) == "68.864"


def test_a_positive_amount_below_the_last_digit_is_not_written_as_zero():
    """A shape-less model's automatic offload moves exactly the excess: Qwen3.5 9B at 274,432 tokens on an RTX 4090
    read "runs with 0.00 GiB in system RAM"."""
    from django.utils import translation
    from reports.templatetags.fmt import gib
    with translation.override("en"):
        assert (gib(3 * 2**20), gib(0), gib(6 * 2**20), gib(2**30, 1)) == ("<0.01 GiB", "0.00 GiB", "0.01 GiB",
                                                                            "1.0 GiB")
    with translation.override("de"):
        assert gib(3 * 2**20) == "<0,01 GiB"


def test_a_short_offload_note_quotes_figures_only_of_the_pages_own_engine(client):
    """30 % of Llama 3.3 70B's weights in system RAM leave an RTX 3090 short under llama.cpp. On the llama.cpp page
    the note under its command quotes the GPU's need; on a vLLM page the llama.cpp line is the alternative, and the
    page's figures are vLLM's: the note says the same without them."""
    own = text_of(client, url("llama-3-3-70b-instruct", "rtx-3090", query="offload=30"))
    assert "With this share in system RAM the fullest GPU would still need 29.44 GiB of its 22.80 GiB" in own
    other = text_of(client, url("llama-3-3-70b-instruct", "rtx-3090",
                                query="offload=30&engine=vllm&quant=Q4_K_M&kv_dtype=auto"))
    assert "With this share in system RAM llama-server would not fit the GPU either" in other
    assert "the fullest GPU would still need" not in other


def test_the_tensor_parallel_sentence_adds_up_with_kv_head_copies(client):
    """Qwen3-235B at FP8 on 8 × H100 (4 KV heads): "keeps 0.09 GiB whole on every GPU: … 221.23 GiB in all" left
    0.37 GiB unexplained (the K/V projections that two ranks each hold in full); the sentence names them and the
    parts sum to the total."""
    _, catalog = current_catalog()
    tp = plan_memory(catalog.model("qwen3-235b-a22b-instruct-2507"), catalog.hardware["h100-80gb-sxm"],
                     Scenario(engine="vllm", gpus=8, quant="FP8", kv_dtype="auto")).tensor_parallel
    assert tp.sharded_bytes + tp.replicated_bytes * 8 + tp.head_replica_bytes == pytest.approx(
        tp.all_ranks_checkpoint_bytes)
    assert round(tp.head_replica_bytes / GIB, 2) == 0.37
    text = text_of(client, url("qwen3-235b-a22b-instruct-2507", "h100-80gb-sxm", query="engine=vllm&gpus=8&quant=FP8"))
    assert (f"and the K/V projections in copies, as the model has fewer KV heads than GPUs "
            f"({tp.head_replica_bytes / GIB:.2f} GiB more in all): {tp.per_rank_checkpoint_bytes / GIB:.2f} GiB per GPU, "
            f"{tp.all_ranks_checkpoint_bytes / GIB:.2f} GiB in all.") in text


def test_the_pool_counts_its_sequences_the_same_way_twice(client):
    """"a pool of 104,080 tokens, 3.1 sequences at 32K" above a note that read "holds 3.2 full sequences": both
    round down to a tenth now."""
    text = text_of(client, url("llama-3-3-70b-instruct", "rtx-4090",
                               query="quant=AWQ&gpus=4&engine=vllm&batch=16&context=32768"))
    pool = re.search(r"([\d.]+) sequences at 32K", text).group(1)
    note = re.search(r"vLLM's KV pool holds ([\d.]+) full sequences of 32,768 tokens", text).group(1)
    assert pool == note


@pytest.mark.parametrize("lang, headline", [
    ("en", "Fits with safe headroom: 5 of the 20 sequences at a time"),
    ("de", "Passt mit sicherer Reserve – gleichzeitig: 5 von 20 Sequenzen"),
])
def test_the_verdict_says_how_many_sequences_vllm_serves_at_once(client, lang, headline):
    """A startup asking for 20 concurrent users read "Fits with safe headroom" in the headline of Llama 3.3 70B FP8
    on one RTX PRO 6000 under vLLM, whose KV pool holds 5 of them at full context (the rest queue); only the card
    below said so."""
    text = text_of(client, url("llama-3-3-70b-instruct", "rtx-pro-6000-blackwell", lang,
                               "engine=vllm&batch=20&quant=FP8"))
    assert headline in text
    alone = text_of(client, url("llama-3-3-70b-instruct", "rtx-pro-6000-blackwell", lang, "engine=vllm&quant=FP8"))
    assert "sequences at a time" not in alone and "gleichzeitig:" not in alone


@pytest.mark.parametrize("path", [url("llama-3-1-8b-instruct", "rtx-3060-12gb"),
                                  url("llama-3-1-8b-instruct", "rtx-4090", query="gpus=2"),
                                  url("llama-3-1-8b-instruct", "rtx-4090", query="hours=6")])
def test_the_rented_hours_line_multiplies_out_to_the_monthly_bill(client, path):
    """"$0.22/h × 1.78 h/day × 30.4 days" made $11.90 beside a bill of $11.93: the rented hours of a per-token
    comparison (4 × 56.6 / 126.9 = 1.7837 h/day) need their digits for the line to be the bill's arithmetic."""
    text = text_of(client, path)
    bill = float(re.search(r"Cloud per month \$([\d,.]+)", text)[1].replace(",", ""))
    hourly, hours, days = re.search(r"\$([\d.]+)/h × ([\d.]+) h/day × ([\d.]+) days", text).groups()
    assert round(float(hourly) * float(hours) * float(days), 2) == bill


def test_the_faq_gives_vllms_longest_context_as_its_max_model_len(client):
    """Under vLLM with 8 sequences the FAQ read "with 8 sequences, up to 202,752 tokens of context per sequence fit",
    the whole pool for one sequence: vLLM's longest context is the --max-model-len it starts with, one sequence."""
    path = url("qwen3-30b-a3b-instruct-2507", "rtx-5090", query="quant=AWQ&context=32768&batch=8&kv_dtype=fp8&engine=vllm")
    text = text_of(client, path)
    tokens = re.search(r"vLLM starts up to --max-model-len (\d+) in this configuration", text)[1]
    assert (f"vLLM starts up to --max-model-len {tokens} : its pool then holds one sequence of {int(tokens):,} tokens"
            in text)
    assert "tokens of context per sequence fit" not in text
