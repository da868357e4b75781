"""The catalog every page reads: LLM models, accelerators, their prices and cloud offers.

Admins keep it current in the Django admin. Seeded rows remember what the seed gave them (`seed_snapshot`),
so `manage.py load_catalog` can fill in new seed data without overwriting a field an admin changed.
Prices and cloud rates are never lost by an edit: every create and every change is copied to `PriceRecord`.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from reports.sizing.config_parser import parse_config
from reports.sizing.errors import ConfigError, SizingError
from reports.sizing.estimate import HARDWARE_NUMBER_LIMITS
from reports.sizing.fit import DEFAULT_USABLE_FACTOR  # the engine's default usable share, sourced there
from reports.sizing.quant import quant_format


# The report of a visitor's own hardware lives at /report/<model>/custom/ (reports.forms.CUSTOM_HARDWARE_SLUG): an
# accelerator with this slug could never be reached.
CUSTOM_HARDWARE_SLUG = "custom"
RESERVED_HARDWARE_SLUGS = frozenset({CUSTOM_HARDWARE_SLUG})

# Upper bounds of the accelerator figures: the engine's limits for a --hardware file and the public "my hardware"
# form (reports.sizing.estimate.HARDWARE_NUMBER_LIMITS: a 2 TB accelerator, 100 TB/s, 100 PFLOPS, 100 kW), far
# above any product (the seed's largest: 512 GB, 8,000 GB/s, 5,000 FP8 TFLOPS, 1,400 W) but keeping the pages'
# arithmetic finite (memory_gb=1e308 made the API answer "Infinity"; 1e50 broke the number formatting).
LIMITS = HARDWARE_NUMBER_LIMITS
# The smallest usable share: unified memory's default is 0.78 and no device leaves less than a tenth of its memory
# to the model; 1e-300 turned the compare page's arithmetic into an overflow.
MIN_USABLE_FACTOR = 0.1
# Prices: the engine's limit for a --hardware price (price_usd, $10,000,000), over two hundred times the dearest
# seeded accelerator ($45,000). A cloud offer's hourly price of a whole instance: $100,000/h, some 1,800 times the
# seed's dearest ($55.04/h for 8 GPUs) and still above a thousand GPUs at $100/h each; the column itself
# (max_digits=10, decimal_places=3) would take $9,999,999.999/h. Both stay inside PriceRecord.usd
# (max_digits=13, decimal_places=3: ten integer digits, as HardwarePrice.usd).
MAX_PRICE_USD = Decimal(str(int(HARDWARE_NUMBER_LIMITS["price_usd"][1])))
MAX_HOURLY_USD = Decimal("100000")
MIN_PRICE_USD = Decimal("0.01")
MIN_HOURLY_USD = Decimal("0.001")
# Launch years: the first GPU a sizing page could mean is far later than 1990; 2100 keeps typos (99999999) out.
MIN_LAUNCH_YEAR, MAX_LAUNCH_YEAR = 1990, 2100


def _max(field: str) -> MaxValueValidator:
    return MaxValueValidator(LIMITS[field][1])


def validate_lowercase_slug(value: str) -> None:
    """The site lower-cases slug URLs (reports.views.not_found redirects /RTX-4090/ to /rtx-4090/): a slug with a
    capital letter could never be reached."""
    if value != value.lower():
        raise ValidationError(_("Use lower-case letters only (the site's URLs are lower case): %(slug)s."),
                              code="slug_case", params={"slug": value.lower()})


def validate_hardware_slug(value: str) -> None:
    if value.lower() in RESERVED_HARDWARE_SLUGS:
        raise ValidationError(_("The slug “%(slug)s” is reserved (the report of a visitor's own hardware uses it)."),
                              code="slug_reserved", params={"slug": value})


def _gguf_tags(text: str) -> tuple[list[str], list[str]]:
    """The comma-separated GGUF tags as (the engine's names of the known ones, each once; the unknown tags)."""
    names, unknown = [], []
    for tag in (part.strip() for part in text.split(",")):
        if not tag:
            continue
        try:
            name = quant_format(tag).name
        except SizingError:
            unknown.append(tag)
            continue
        if name not in names:
            names.append(name)
    return names, unknown


def normalize_gguf_quants(text: str) -> str:
    """The comma-separated GGUF tags as the engine names them (q4_k_m → Q4_K_M), each once; ValidationError naming
    the tags that are no known format (the home page sizes every model with them)."""
    names, unknown = _gguf_tags(text)
    if unknown:
        raise ValidationError(
            _("Not a known quantization format: %(tags)s. Use the names of the quantization formats (Q4_K_M, Q8_0, "
              "F16, MXFP4_MOE, …), separated by commas."), code="unknown_quant", params={"tags": ", ".join(unknown)})
    return ", ".join(names)


def known_gguf_quants(text: str) -> tuple[str, ...]:
    """The known formats among the tags, canonical names, unknown ones skipped (a row saved before validation)."""
    return tuple(_gguf_tags(text)[0])


def validate_not_future(value: dt.date) -> None:
    # A day of slack: an admin east of UTC may verify a price on what is already tomorrow in UTC.
    if value > timezone.localdate() + dt.timedelta(days=1):
        raise ValidationError(_("This date lies in the future."), code="future_date")


class SeededModel(models.Model):
    """A row the seed loader may create and later update field by field."""

    # Rows whose slug is in their public URLs: a changed slug leaves a SlugRedirect from the old one.
    redirect_kind = ""

    # Field values as the seed last set them; a field whose value differs was changed by an admin.
    seed_snapshot = models.JSONField(default=dict, blank=True, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True

    def save(self, *args, **kwargs) -> None:
        former = None
        if self.redirect_kind and self.pk:
            former = type(self)._default_manager.filter(pk=self.pk).values_list("slug", flat=True).first()
        super().save(*args, **kwargs)
        if former and former != self.slug:
            SlugRedirect.record(self.redirect_kind, former, self.slug)


class AttentionKind(models.TextChoices):
    COMPRESSED = "compressed", _("Compressed sparse attention (CSA/HCA)")
    MLA = "mla", _("Multi-head latent attention (MLA)")
    HYBRID = "hybrid", _("Hybrid linear/state-space + attention")
    SLIDING = "sliding", _("Sliding-window + global attention")
    GQA = "gqa", _("Grouped-query attention (GQA)")
    MHA = "mha", _("Multi-head attention (MHA)")
    MQA = "mqa", _("Multi-query attention (MQA)")


class LLMModel(SeededModel):
    redirect_kind = "model"

    class Confidence(models.TextChoices):
        CONFIG = "config.json", _("config.json")
        DOCUMENTATION = "documentation", _("documentation")
        ESTIMATED = "estimated", _("estimated")

    name = models.CharField(_("name"), max_length=120)
    slug = models.SlugField(_("slug"), max_length=120, unique=True, validators=[validate_lowercase_slug])
    family = models.CharField(_("family"), max_length=60, blank=True)
    vendor = models.CharField(_("vendor"), max_length=60, blank=True)
    hf_repo = models.CharField(_("Hugging Face repo"), max_length=200, blank=True)
    gguf_repo = models.CharField(_("GGUF repo"), max_length=200, blank=True)
    gguf_repo_quants = models.CharField(
        _("quantizations in the GGUF repo"), max_length=300, blank=True, validators=[normalize_gguf_quants],
        help_text=_("The file types the GGUF repo publishes, comma-separated as llama.cpp's -hf tags (Q4_K_M, "
                    "Q8_0, F16). Empty: not known, and the launch command asks the repo for any format. Source "
                    "them in the notes (the repo's file listing)."))
    license = models.CharField(_("license"), max_length=80, blank=True)
    release_date = models.DateField(_("release date"), null=True, blank=True)
    config = models.JSONField(
        _("config.json"), null=True, blank=True,
        help_text=_("The model's Hugging Face config.json. The architecture fields below are derived from it."),
    )
    stated_params_total = models.FloatField(
        _("stated total parameters"), null=True, blank=True, validators=[MinValueValidator(1)])
    stated_params_active = models.FloatField(
        _("stated active parameters"), null=True, blank=True, validators=[MinValueValidator(1)])
    source = models.TextField(_("source"))
    confidence = models.CharField(_("confidence"), max_length=20, choices=Confidence.choices)
    notes = models.TextField(_("notes"), blank=True)

    # Normalized architecture, derived from `config` on save (shown for review, filterable in the admin).
    architecture = models.CharField(_("architecture"), max_length=60, blank=True, editable=False)
    attention_kind = models.CharField(_("attention"), max_length=20, blank=True, editable=False,
                                      choices=AttentionKind.choices)
    num_layers = models.PositiveIntegerField(null=True, blank=True, editable=False)
    hidden_size = models.PositiveIntegerField(null=True, blank=True, editable=False)
    intermediate_size = models.PositiveIntegerField(null=True, blank=True, editable=False)
    num_attention_heads = models.PositiveIntegerField(null=True, blank=True, editable=False)
    num_kv_heads = models.PositiveIntegerField(null=True, blank=True, editable=False)
    head_dim = models.PositiveIntegerField(null=True, blank=True, editable=False)
    q_lora_rank = models.PositiveIntegerField(null=True, blank=True, editable=False)
    kv_lora_rank = models.PositiveIntegerField(null=True, blank=True, editable=False)
    qk_rope_head_dim = models.PositiveIntegerField(null=True, blank=True, editable=False)
    qk_nope_head_dim = models.PositiveIntegerField(null=True, blank=True, editable=False)
    v_head_dim = models.PositiveIntegerField(null=True, blank=True, editable=False)
    num_experts = models.PositiveIntegerField(null=True, blank=True, editable=False)
    experts_per_token = models.PositiveIntegerField(null=True, blank=True, editable=False)
    num_shared_experts = models.PositiveIntegerField(null=True, blank=True, editable=False)
    moe_intermediate_size = models.PositiveIntegerField(null=True, blank=True, editable=False)
    first_dense_layers = models.PositiveIntegerField(null=True, blank=True, editable=False)
    sliding_window = models.PositiveIntegerField(null=True, blank=True, editable=False)
    layer_pattern = models.JSONField(
        null=True, blank=True, editable=False,
        help_text=_("Count of layers per mixer/feed-forward kind, e.g. {'full/moe': 58, 'full/dense': 3}."))
    linear_attention = models.JSONField(null=True, blank=True, editable=False)
    vocab_size = models.PositiveIntegerField(null=True, blank=True, editable=False)
    tie_word_embeddings = models.BooleanField(null=True, blank=True, editable=False)
    max_context = models.PositiveIntegerField(null=True, blank=True, editable=False)
    native_dtype = models.CharField(max_length=12, blank=True, editable=False)
    mtp_layers = models.PositiveIntegerField(null=True, blank=True, editable=False)

    class Meta:
        verbose_name = _("LLM model")
        verbose_name_plural = _("LLM models")
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(stated_params_total__isnull=True) | Q(stated_params_total__gt=0),
                name="llmmodel_params_total_positive"),
            models.CheckConstraint(
                condition=Q(stated_params_active__isnull=True) | Q(stated_params_total__isnull=True)
                | Q(stated_params_active__lte=models.F("stated_params_total")),
                name="llmmodel_active_le_total"),
            models.CheckConstraint(
                condition=~Q(config__isnull=True) | Q(stated_params_total__isnull=False),
                name="llmmodel_config_or_stated_params"),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("reports:model", kwargs={"model_slug": self.slug})

    def clean(self) -> None:
        errors: dict[str, str] = {}
        if self.config is None and not self.stated_params_total:
            errors["stated_params_total"] = _(
                "A model without config.json needs its stated total parameters (the weights are estimated from them).")
        if self.config is not None:
            if self.confidence == self.Confidence.ESTIMATED:
                errors["confidence"] = _("A model with a config.json is not 'estimated': choose config.json or documentation.")
            try:
                parse_config(self.config, slug=self.slug, name=self.name)
            except ConfigError as exc:
                errors["config"] = _("This config.json cannot be sized: %(reason)s") % {"reason": exc}
        elif self.confidence != self.Confidence.ESTIMATED:
            errors["confidence"] = _("Without a config.json the architecture is estimated: choose 'estimated'.")
        if self.stated_params_total and self.stated_params_active and (
                self.stated_params_active > self.stated_params_total):
            errors["stated_params_active"] = _("Active parameters cannot exceed total parameters.")
        try:
            self.gguf_repo_quants = normalize_gguf_quants(self.gguf_repo_quants or "")
        except ValidationError as exc:
            errors["gguf_repo_quants"] = exc.messages[0]
        if errors:
            raise ValidationError(errors)

    def save(self, *args, **kwargs) -> None:
        self.refresh_architecture_fields()
        super().save(*args, **kwargs)

    def refresh_architecture_fields(self) -> None:
        """Copy the normalized shapes of `config` into the columns (clears them when there is no config)."""
        from catalog.architecture import architecture_fields  # local: keeps the model module import-light

        for field, value in architecture_fields(self.config, slug=self.slug, name=self.name).items():
            setattr(self, field, value)


class Accelerator(SeededModel):
    redirect_kind = "hardware"

    class Kind(models.TextChoices):
        DISCRETE = "discrete", _("discrete GPU")
        ACCELERATOR = "accelerator", _("datacenter accelerator")
        UNIFIED = "unified", _("unified memory")

    class Backend(models.TextChoices):
        CUDA = "cuda", "CUDA"
        ROCM = "rocm", "ROCm/HIP"
        METAL = "metal", "Metal"
        VULKAN = "vulkan", "Vulkan"
        SYCL = "sycl", "SYCL"
        CANN = "cann", "CANN"
        OTHER = "other", _("other")

    vendor = models.CharField(_("vendor"), max_length=60)
    name = models.CharField(_("name"), max_length=120)
    slug = models.SlugField(_("slug"), max_length=120, unique=True,
                            validators=[validate_lowercase_slug, validate_hardware_slug])
    memory_gb = models.FloatField(_("memory (GB)"), validators=[MinValueValidator(0.1), _max("memory_gb")])
    memory_type = models.CharField(_("memory type"), max_length=40, blank=True)
    bandwidth_gbs = models.FloatField(_("memory bandwidth (GB/s)"),
                                      validators=[MinValueValidator(0.1), _max("bandwidth_gbs")])
    fp16_tflops = models.FloatField(
        _("dense FP16/BF16 TFLOPS"), null=True, blank=True, validators=[MinValueValidator(0.01), _max("fp16_tflops")],
        help_text=_("Dense tensor throughput with FP32 accumulate, no sparsity. Empty = not published."))
    fp16_acc_tflops = models.FloatField(
        _("dense FP16 TFLOPS, FP16 accumulate"), null=True, blank=True,
        validators=[MinValueValidator(0.01), _max("fp16_acc_tflops")],
        help_text=_("Tensor peak with FP16 accumulate where it differs (GeForce: twice the FP32-accumulate rate). "
                    "Empty = same as the FP16/BF16 figure."))
    fp8_tflops = models.FloatField(_("dense FP8 TFLOPS"), null=True, blank=True,
                                   validators=[MinValueValidator(0.01), _max("fp8_tflops")])
    tdp_w = models.FloatField(_("TDP (W)"), null=True, blank=True, validators=[MinValueValidator(1), _max("tdp_w")])
    kind = models.CharField(_("kind"), max_length=20, choices=Kind.choices)
    usable_memory_factor = models.FloatField(
        _("usable-memory factor"), null=True, blank=True,
        validators=[MinValueValidator(MIN_USABLE_FACTOR), MaxValueValidator(1)],
        help_text=_("Share of nominal memory available to the model. Empty: 0.95, or 0.78 for unified memory."))
    backend = models.CharField(_("backend"), max_length=10, choices=Backend.choices)
    architecture = models.CharField(
        _("GPU architecture"), max_length=40, blank=True,
        help_text=_("GPU family, e.g. ampere, ada, hopper, blackwell (selects kernel-efficiency rules)."))
    interconnect = models.CharField(_("interconnect"), max_length=80, blank=True)
    interconnect_gbs = models.FloatField(
        _("interconnect (GB/s)"), null=True, blank=True, validators=[MinValueValidator(0.1), _max("interconnect_gbs")])
    interconnect_mesh_peers = models.PositiveSmallIntegerField(
        _("interconnect mesh peers"), null=True, blank=True, validators=[MinValueValidator(1), MaxValueValidator(63)],
        help_text=_("When the GPU-to-GPU links form a full mesh (AMD Infinity Fabric, Gaudi's RoCE ports): how many "
                    "peers one accelerator links to directly, sharing the interconnect bandwidth equally. Empty: a "
                    "switch (NVSwitch), every peer at the full bandwidth."))
    launch_year = models.PositiveSmallIntegerField(
        _("launch year"), null=True, blank=True,
        validators=[MinValueValidator(MIN_LAUNCH_YEAR), MaxValueValidator(MAX_LAUNCH_YEAR)])
    spec_sources = models.TextField(_("spec sources"))
    notes = models.TextField(_("notes"), blank=True)

    class Meta:
        verbose_name = _("accelerator")
        verbose_name_plural = _("accelerators")
        ordering = ["vendor", "memory_gb", "name"]
        constraints = [
            models.CheckConstraint(condition=Q(memory_gb__gt=0), name="accelerator_memory_positive"),
            models.CheckConstraint(condition=Q(bandwidth_gbs__gt=0), name="accelerator_bandwidth_positive"),
            models.CheckConstraint(
                condition=Q(fp16_tflops__isnull=True) | Q(fp16_tflops__gt=0), name="accelerator_fp16_positive"),
            models.CheckConstraint(
                condition=Q(fp8_tflops__isnull=True) | Q(fp8_tflops__gt=0), name="accelerator_fp8_positive"),
            models.CheckConstraint(
                condition=Q(fp16_acc_tflops__isnull=True) | Q(fp16_acc_tflops__gt=0),
                name="accelerator_fp16_acc_positive"),
            models.CheckConstraint(condition=Q(tdp_w__isnull=True) | Q(tdp_w__gt=0), name="accelerator_tdp_positive"),
            models.CheckConstraint(
                condition=Q(usable_memory_factor__isnull=True)
                | (Q(usable_memory_factor__gt=0) & Q(usable_memory_factor__lte=1)),
                name="accelerator_usable_factor_range"),
            # The upper bounds of the validators (LIMITS), also for rows written outside the admin's forms.
            models.CheckConstraint(
                condition=Q(memory_gb__lte=LIMITS["memory_gb"][1]) & Q(bandwidth_gbs__lte=LIMITS["bandwidth_gbs"][1])
                & (Q(fp16_tflops__isnull=True) | Q(fp16_tflops__lte=LIMITS["fp16_tflops"][1]))
                & (Q(fp16_acc_tflops__isnull=True) | Q(fp16_acc_tflops__lte=LIMITS["fp16_acc_tflops"][1]))
                & (Q(fp8_tflops__isnull=True) | Q(fp8_tflops__lte=LIMITS["fp8_tflops"][1]))
                & (Q(tdp_w__isnull=True) | Q(tdp_w__lte=LIMITS["tdp_w"][1]))
                & (Q(interconnect_gbs__isnull=True) | Q(interconnect_gbs__lte=LIMITS["interconnect_gbs"][1])),
                name="accelerator_figures_bounded"),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("reports:hardware", kwargs={"hardware_slug": self.slug})

    @property
    def effective_usable_factor(self) -> float:
        return self.usable_memory_factor or DEFAULT_USABLE_FACTOR[self.kind]

    def clean(self) -> None:
        if self.usable_memory_factor is not None and not MIN_USABLE_FACTOR <= self.usable_memory_factor <= 1:
            raise ValidationError({"usable_memory_factor": _("Enter a share between 0.1 and 1, e.g. 0.95.")})


class QuantFormat(SeededModel):
    class Family(models.TextChoices):
        GGUF = "gguf", "GGUF"
        NATIVE = "native", _("native checkpoint")
        AWQ_GPTQ = "awq-gptq", "AWQ/GPTQ"

    name = models.CharField(_("name"), max_length=30, unique=True)
    family = models.CharField(_("family"), max_length=10, choices=Family.choices)
    quality_note_en = models.CharField(_("quality note (English)"), max_length=200, blank=True)
    quality_note_de = models.CharField(_("quality note (German)"), max_length=200, blank=True)
    sort_order = models.PositiveSmallIntegerField(_("sort order"), default=100)
    source = models.TextField(_("source"), blank=True)

    class Meta:
        verbose_name = _("quantization format")
        verbose_name_plural = _("quantization formats")
        ordering = ["sort_order", "name"]

    def __str__(self) -> str:
        return self.name


class PublishedFileSize(SeededModel):
    """A published file size (GGUF listing, llama-bench) — the engine uses it for recipes shapes cannot predict."""

    model = models.ForeignKey(LLMModel, on_delete=models.CASCADE, related_name="published_sizes")
    quant = models.CharField(_("quantization"), max_length=30)
    size_bytes = models.PositiveBigIntegerField(_("size (bytes)"))
    source = models.TextField(_("source"))

    class Meta:
        verbose_name = _("published file size")
        verbose_name_plural = _("published file sizes")
        ordering = ["model", "quant"]
        constraints = [
            models.UniqueConstraint(fields=["model", "quant"], name="published_size_unique_per_quant"),
            models.CheckConstraint(condition=Q(size_bytes__gt=0), name="published_size_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.model} {self.quant}"


class HardwarePrice(SeededModel):
    class Condition(models.TextChoices):
        NEW = "new", _("new")
        USED = "used", _("used")

    accelerator = models.ForeignKey(Accelerator, on_delete=models.CASCADE, related_name="prices")
    condition = models.CharField(_("condition"), max_length=4, choices=Condition.choices, default=Condition.NEW)
    usd = models.DecimalField(_("price (USD)"), max_digits=12, decimal_places=2,
                              validators=[MinValueValidator(MIN_PRICE_USD), MaxValueValidator(MAX_PRICE_USD)])
    as_of = models.DateField(_("as of"))
    source = models.TextField(_("source"))
    note = models.CharField(_("note"), max_length=200, blank=True)

    class Meta:
        verbose_name = _("hardware price")
        verbose_name_plural = _("hardware prices")
        ordering = ["accelerator", "condition", "-as_of"]
        get_latest_by = "as_of"
        constraints = [models.CheckConstraint(condition=Q(usd__gt=0), name="hardware_price_positive"),
                       models.CheckConstraint(condition=Q(usd__lte=MAX_PRICE_USD), name="hardware_price_bounded")]

    def __str__(self) -> str:
        return f"{self.accelerator} {self.condition} ${self.usd} ({self.as_of})"

    def save(self, *args, **kwargs) -> None:
        super().save(*args, **kwargs)
        PriceRecord.record(self, hardware_price=self, accelerator=self.accelerator, usd=self.usd,
                           as_of=self.as_of, source=self.source, label=f"{self.get_condition_display()}")


class DatePrecision(models.TextChoices):
    DAY = "day", _("day")
    MONTH = "month", _("month only")


class CloudOffer(SeededModel):
    provider = models.CharField(_("provider"), max_length=60)
    instance = models.CharField(_("instance"), max_length=200)
    accelerator = models.ForeignKey(Accelerator, on_delete=models.PROTECT, related_name="cloud_offers")
    gpu_count = models.PositiveSmallIntegerField(_("GPU count"), default=1, validators=[MinValueValidator(1)])
    hourly_usd = models.DecimalField(
        _("hourly price (USD, whole instance)"), max_digits=10, decimal_places=3,
        validators=[MinValueValidator(MIN_HOURLY_USD), MaxValueValidator(MAX_HOURLY_USD)])
    billing = models.CharField(_("billing"), max_length=60, blank=True)
    verified = models.DateField(_("verified"), validators=[validate_not_future])
    # Many sources date a price by month only ("March 2026"); the date field then holds the 1st, and the site
    # shows the month, never a day the source did not give.
    verified_precision = models.CharField(
        _("precision of the verification date"), max_length=5, choices=DatePrecision.choices,
        default=DatePrecision.DAY,
        help_text=_("Month: the source names only the month; enter the 1st and the site shows the month."))
    url = models.URLField(_("deploy URL"), blank=True)
    source = models.TextField(_("source"))
    # A rate its own source does not support (the seed pages' Vast.ai 8× A100 at $3.54/h = $0.44 per GPU-hour, half
    # the lowest A100 spot rate in the price data): shown in the tables with this doubt, never picked as the
    # cheapest offer (cost per 1M tokens, rent vs. buy, the cloud recommendation).
    price_doubt = models.TextField(
        _("price doubt"), blank=True,
        help_text=_("Why the rate is not confirmed by its source. An offer with a doubt is listed but never "
                    "picked as the cheapest, and the page shows it as unconfirmed instead of verified."))
    is_active = models.BooleanField(_("active"), default=True)

    class Meta:
        verbose_name = _("cloud offer")
        verbose_name_plural = _("cloud offers")
        ordering = ["provider", "accelerator", "gpu_count"]
        constraints = [
            models.CheckConstraint(condition=Q(hourly_usd__gt=0), name="cloud_offer_hourly_positive"),
            models.CheckConstraint(condition=Q(hourly_usd__lte=MAX_HOURLY_USD), name="cloud_offer_hourly_bounded"),
            models.CheckConstraint(condition=Q(gpu_count__gte=1), name="cloud_offer_gpu_count_positive"),
            models.UniqueConstraint(fields=["provider", "instance", "accelerator", "gpu_count"],
                                    name="cloud_offer_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.provider}: {self.gpu_count}× {self.accelerator}"

    def clean(self) -> None:
        if self.verified_precision == DatePrecision.MONTH and self.verified and self.verified.day != 1:
            raise ValidationError({"verified": _("A date known only by its month is entered as the 1st of the month "
                                                 "(%(date)s).") % {"date": self.verified.replace(day=1).isoformat()}})

    @property
    def hourly_usd_per_gpu(self) -> Decimal:
        """The instance's hourly rate per GPU (the hardware page's sort key and column)."""
        return self.hourly_usd / self.gpu_count

    @property
    def verified_month_only(self) -> bool:
        """As CloudOfferSpec.verified_month_only: the source dates the price by month."""
        return self.verified_precision == DatePrecision.MONTH

    def save(self, *args, **kwargs) -> None:
        super().save(*args, **kwargs)
        PriceRecord.record(self, cloud_offer=self, accelerator=self.accelerator, usd=self.hourly_usd,
                           as_of=self.verified, source=self.source,
                           label=f"{self.provider} · {self.gpu_count}× · {self.instance}")


class PriceRecord(models.Model):
    """Append-only history: one row per created or changed hardware price or cloud rate."""

    accelerator = models.ForeignKey(Accelerator, on_delete=models.CASCADE, related_name="price_records")
    hardware_price = models.ForeignKey(HardwarePrice, null=True, blank=True, on_delete=models.SET_NULL)
    cloud_offer = models.ForeignKey(CloudOffer, null=True, blank=True, on_delete=models.SET_NULL)
    label = models.CharField(_("what"), max_length=300)
    # Ten integer digits, as HardwarePrice.usd (max_digits=12, decimal_places=2): with nine, a $1,000,000,000 price
    # was written to SQLite but could never be read back (decimal.InvalidOperation on every page listing it).
    usd = models.DecimalField(_("USD"), max_digits=13, decimal_places=3)
    as_of = models.DateField(_("as of"))
    source = models.TextField(_("source"), blank=True)
    recorded_at = models.DateTimeField(_("recorded"), auto_now_add=True)

    class Meta:
        verbose_name = _("price record")
        verbose_name_plural = _("price history")
        ordering = ["-recorded_at", "-id"]

    def __str__(self) -> str:
        return f"{self.label}: ${self.usd} ({self.as_of})"

    @classmethod
    def record(cls, row: models.Model, **values) -> None:
        """Append a record unless the latest one for this row already has the same price, date and source."""
        owner = {"hardware_price": values["hardware_price"]} if "hardware_price" in values else {
            "cloud_offer": values["cloud_offer"]}
        latest = cls.objects.filter(**owner).order_by("-recorded_at", "-id").first()
        if latest and (latest.usd, latest.as_of, latest.source) == (values["usd"], values["as_of"], values["source"]):
            return
        cls.objects.create(**values)


class SlugRedirect(models.Model):
    """A former slug of a model or accelerator: its old URLs answer with a permanent redirect to the new ones."""

    kind = models.CharField(max_length=10, choices=[("model", "model"), ("hardware", "hardware")])
    old_slug = models.SlugField(max_length=120)
    new_slug = models.SlugField(max_length=120)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("former slug")
        verbose_name_plural = _("former slugs")
        constraints = [models.UniqueConstraint(fields=["kind", "old_slug"], name="slug_redirect_unique")]

    def __str__(self) -> str:
        return f"{self.kind}: {self.old_slug} → {self.new_slug}"

    @classmethod
    def record(cls, kind: str, old: str, new: str) -> None:
        """old → new; earlier redirects to `old` now lead to `new`; a slug in use again is no redirect."""
        cls.objects.filter(kind=kind, new_slug=old).update(new_slug=new)
        cls.objects.filter(kind=kind, old_slug=new).delete()
        cls.objects.update_or_create(kind=kind, old_slug=old, defaults={"new_slug": new})

    @classmethod
    def current(cls, kind: str, slug: str) -> str | None:
        return cls.objects.filter(kind=kind, old_slug=slug).values_list("new_slug", flat=True).first()

    @classmethod
    def renamed(cls, kind: str, slug: str, known) -> str | None:
        """The current slug of `slug` when it is no longer one of `known` (the catalog's) and an admin renamed it."""
        return cls.current(kind, slug) if slug and slug not in known else None


class SeedKey(models.Model):
    """A seed row `load_catalog` has applied, by its key in the seed files, and the row it became.

    The loader creates a seed row only the first time; afterwards it finds the row by `object_id`, so a row an admin
    renamed (a model's slug, an offer's instance, a price's date) is still the same row, and one an admin deleted
    (`object_id` empty, or no such row) is not created again. New seed rows, with keys never applied, still arrive.
    """

    kind = models.CharField(max_length=40)  # the model's name: accelerator, hardwareprice, …
    key = models.CharField(max_length=500)  # its identity in the seed files (seed_loader builds it)
    object_id = models.PositiveBigIntegerField(null=True, blank=True)
    applied_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "key"], name="seed_key_unique")]

    def __str__(self) -> str:
        return f"{self.kind} {self.key}"


class SubmittedConfig(models.Model):
    """A config.json a visitor pasted or uploaded, kept by the hash of its content for a shareable URL.

    Nothing about the visitor is stored (no address, no user agent): only the config, its hash and when it first
    arrived. An admin can promote it to a catalog model.
    """

    sha256 = models.CharField(_("SHA-256"), max_length=64, unique=True, editable=False)
    config = models.JSONField(_("config.json"))
    name = models.CharField(_("name"), max_length=120)
    created_at = models.DateTimeField(_("submitted"), auto_now_add=True)
    promoted_to = models.ForeignKey(LLMModel, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="submitted_configs", verbose_name=_("promoted to"))

    class Meta:
        verbose_name = _("submitted config.json")
        verbose_name_plural = _("submitted config.json files")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.sha256[:12]})"

    @property
    def short_hash(self) -> str:
        return self.sha256[:16]
