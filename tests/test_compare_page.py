"""The compare page prices a rented column as the report does (the whole model on the offer, the smallest monthly bill
at the visitor's hours), keeps the cost inputs through its form and links, and says "—" for a column it cannot size."""

import html
import re

import pytest

from reports.estimates import current_catalog
from reports.sizing.economics import cost_per_million_tokens
from reports.sizing.estimate import count_parameters, decode_speeds, plan_memory
from reports.sizing.specs import Scenario

pytestmark = pytest.mark.django_db

LLAMA_8B = "/en/compare/llama-3-1-8b-instruct/?hw=rtx-4090&hw=rtx-pro-6000-blackwell"


def text_of(client, path: str, status: int = 200) -> str:
    response = client.get(path)
    assert response.status_code == status, response.content[:300]
    page = re.sub(r"<script.*?</script>|<style.*?</style>|<svg.*?</svg>", "", response.content.decode(), flags=re.S)
    return " ".join(re.sub(r"<[^>]+>", " ", page).split())


def row(text: str, label: str) -> str:
    """The cells of one row of the compare table: the text after its label up to the next row's label."""
    text = text[text.index("Verdict"):]
    text = text[:text.index("Figures are computed")]  # the footer after the table
    labels = ["Verdict", "Required memory", "Usable memory", "Headroom (fullest GPU)", "Decode (one stream)",
              "All concurrent streams", "Prefill", "Renting this hardware, per 1M tokens", "Cloud per month at",
              "Purchase price", "Price per usable GiB", "Power"]
    start = text.index(label) + len(label)
    ends = [text.find(other, start) for other in labels if other != label and text.find(other, start) >= 0]
    return text[start:min(ends, default=len(text))].strip()


def test_a_rented_offer_is_priced_holding_the_whole_model_not_at_the_visitors_offload(client):
    """With --offload-pct 50 the local columns decode ~21.7/22.2 tok/s, and the rented cost was priced at that speed:
    $4.81 and $9.12 per 1M tokens. An offer holds the whole model (estimate._costs_on_fitting_offers drops offload_pct),
    so the row is the one without offload: the offer's hourly rate over its decode at the cost depth (half the 8K
    context, estimate.cost_depth), × 1e6 / 3600 (economics.cost_per_million_tokens)."""
    _, catalog = current_catalog()
    model = catalog.model("llama-3-1-8b-instruct")
    params = count_parameters(model)
    offloaded = text_of(client, f"{LLAMA_8B}&offload=50")
    cells = offloaded[offloaded.index("Prefill"):offloaded.index("Cloud per month")]  # the cost row, by any name
    for slug in ("rtx-4090", "rtx-pro-6000-blackwell"):
        hardware = catalog.hardware[slug]
        offer = min((o for o in catalog.offers if o.confirmed and o.accelerator_slug == slug and o.gpu_count == 1),
                    key=lambda o: o.hourly_usd)
        scenario = Scenario(depth=4096)  # llama.cpp, Q4_K_M, no offload
        decode, _ = decode_speeds(model, hardware, scenario, plan_memory(model, hardware, scenario), params)
        expected = cost_per_million_tokens(decode.tokens_per_s, offer.hourly_usd)
        assert f"${expected:.3f}" in cells
    # RunPod's RTX 4090 at $0.34/h: $0.703 (~134 tok/s), packet.ai's RTX PRO 6000 at $0.66/h: $0.909 (~202 tok/s).
    assert cells.strip().endswith(" $0.703 RunPod, $0.34/h $0.909 packet.ai, $0.66/h")
    assert "$4.81" not in cells and "$9.12" not in cells


def test_cloud_per_month_is_the_smallest_bill_at_the_visitors_hours_as_the_reports_rent_vs_buy(client):
    """Of the 8 × H100 SXM offers, Lambda's reserved $14.80/h is the lowest rate but is billed 24 h a day:
    14.80 × 24 × 30.4 = $10,798.08 a month; RunPod's on-demand $22.32/h at 4 h a day is 22.32 × 4 × 30.4 =
    $2,714.11 (economics.rent_comparison's rule), the figure the report's rent vs. buy shows."""
    path = "/en/compare/llama-3-3-70b-instruct/?hw=h100-80gb-sxm:8&engine=vllm&quant=FP8"
    text = text_of(client, path)
    assert row(text, "Cloud per month at") == "4 h/day $2,714.11 RunPod, $22.32/h"
    report = text_of(client, "/en/report/llama-3-3-70b-instruct/h100-80gb-sxm/?gpus=8&engine=vllm&quant=FP8")
    assert "$2,714.11" in report


def test_compare_labels_say_what_the_rows_hold(client):
    # The RTX 4090 has no NVLink at all: separate machines have no fast GPU link between them.
    no_offer = text_of(client, "/en/compare/llama-3-3-70b-instruct/?hw=rtx-4090:2&hw=h100-80gb-sxm:2")
    assert no_offer.count("Separate machines are not one 2-GPU server: they have no fast GPU link between them") == 2
    assert "NVLink" not in row(no_offer, "Renting this hardware, per 1M tokens")
    # vLLM's pool holds 6 of the 8 sequences at full context: "All 8 … together" was not true; the row names the
    # concurrent streams and the cell says how many run at a time.
    batch = text_of(client, "/en/compare/llama-3-1-8b-instruct/?hw=rtx-4090&engine=vllm&batch=8&context=131072"
                            "&quant=FP8")
    assert "All 8 streams together" not in batch and "All concurrent streams" in batch
    assert "Cost per 1M tokens" not in batch


def test_the_form_and_the_column_links_keep_the_budget_and_the_electricity_price(client):
    body = client.get(f"{LLAMA_8B}&budget=3000&kwh=0.3").content.decode()
    assert '<input type="hidden" name="budget" value="3000">' in body
    assert '<input type="hidden" name="kwh" value="0.3">' in body
    links = [html.unescape(link) for link in re.findall(r'<th scope="col" class="num"><a href="([^"]+)"', body)]
    assert len(links) == 2 and all("budget=3000" in link and "kwh=0.3" in link for link in links)
    # A refused one is shown with its error for the visitor to correct, not carried hidden.
    bad = client.get(f"{LLAMA_8B}&kwh=abc")
    assert bad.status_code == 400
    page = bad.content.decode()
    assert 'name="kwh"' in page and 'type="hidden" name="kwh"' not in page and "has-error" in page


def test_a_column_that_cannot_be_sized_says_dash_in_every_row(client):
    """vLLM does not run on a Mac: its usable memory cell was empty and it still had a price per usable GiB, a
    purchase price, a power and a cloud bill."""
    text = text_of(client, "/en/compare/llama-3-1-8b-instruct/?hw=rtx-4090&hw=mac-mini-m4-pro-64gb&engine=vllm"
                           "&kv_dtype=fp8&batch=8")
    for label in ("Required memory", "Usable memory", "Headroom (fullest GPU)", "Decode (one stream)",
                  "All concurrent streams", "Prefill", "Renting this hardware, per 1M tokens", "Purchase price",
                  "Price per usable GiB", "Power"):
        assert row(text, label).endswith(" —"), label
    assert row(text, "Cloud per month at").endswith(" —")
