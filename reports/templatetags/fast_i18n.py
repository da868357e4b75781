"""Django's {% translate %} and {% blocktranslate %} with the same syntax and output, for less work per render.

Loaded after `i18n` (``{% load i18n fast_i18n %}``), these tags replace Django's in that template; makemessages finds
them as it finds Django's (it reads the tag names, not the library), so the message catalog stays what it was.

A report page renders some 130 {% translate "…" %} of a constant text and 70 {% blocktranslate %}. Django's
translate takes a lazy detour for each: a lazy proxy of gettext, that proxy turned into text by the template's
value rendering (localize, escaping), two mark_safe; about 75 Python calls for one word. A constant text needs only
gettext (remembered per language: _translation) and the same percent-sign handling: TranslateNode below does that
and leaves every other form (a variable, a filter, noop, a context that is not a constant) to Django. Django's
blocktranslate builds its msgid again from the tag's tokens at every render, pushes its values onto the context
and looks each up again through every level of it; BlockTranslateNode builds the msgid once, at parse time, and
reads the values from their own dict, the count too (about 7 blocks with a count a page).

`tests/test_fast_i18n.py` renders each form with both tag sets and compares the output.
"""

from __future__ import annotations

import html
from decimal import Decimal

from django import template
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.template import TemplateSyntaxError, Variable
from django.template.base import render_value_in_context
from django.templatetags import i18n
from django.utils import translation
from django.utils.safestring import SafeString

register = template.Library()

# The translations of the tags' constant msgids, per language (get_language(): None when translation is deactivated):
# gettext reads the active translation from an asgiref Local and looks the msgid up in each of its catalogs, ~1.7 µs,
# some 170 times a report page; a dict read is ~0.1 µs. Catalogs are loaded once per process (Django's trans_real
# caches them too); a test that changes the settings they come from clears this with them.
_translated: dict[str | None, dict[tuple[str | None, str], str]] = {}


@receiver(setting_changed)
def _forget_translations(*, setting, **kwargs) -> None:
    if setting in {"LANGUAGES", "LANGUAGE_CODE", "LOCALE_PATHS", "INSTALLED_APPS"}:
        _translated.clear()


def _translation(key: tuple[str | None, str]) -> str:
    """gettext (pgettext with a message context) of key = (context or None, msgid), remembered per language."""
    texts = _translated.get(translation.get_language())
    if texts is None:
        texts = _translated.setdefault(translation.get_language(), {})
    text = texts.get(key)
    if text is None:
        context, msgid = key
        text = texts[key] = translation.gettext(msgid) if context is None else translation.pgettext(context, msgid)
    return text


class TranslateNode(i18n.TranslateNode):
    """{% translate "constant text" [context "constant"] [as var] %}: gettext (pgettext) straight to safe text."""

    def __init__(self, filter_expression, noop, asvar=None, message_context=None):
        super().__init__(filter_expression, noop, asvar, message_context)
        # What Django's Variable looks up: the literal with its percent signs doubled (Variable.resolve).
        self.msgid = self.filter_expression.var.literal.replace("%", "%%")
        self.context_text = None if message_context is None else str(message_context.var)
        self.key = (self.context_text, self.msgid)

    def render(self, context):
        text = _translation(self.key)
        # A literal's translation is safe text in Django's tag too (the literal is marked safe, gettext keeps that);
        # the doubled percent signs are restored as TranslateNode.render does.
        value = SafeString(text.replace("%%", "%"))
        if self.asvar:
            context[self.asvar] = value
            return ""
        return value


def _is_constant_text(filter_expression) -> bool:
    var = filter_expression.var
    return (isinstance(var, Variable) and var.lookups is None and isinstance(var.literal, str)
            and not var.translate and not filter_expression.filters)


@register.tag("translate")
@register.tag("trans")
def do_translate(parser, token):
    node = i18n.do_translate(parser, token)
    context = node.message_context
    if (node.noop or not _is_constant_text(node.filter_expression)
            or (context is not None and (context.is_var or context.filters))):
        return node  # a variable, a filter, noop or a context that is looked up: Django's own node
    return TranslateNode(node.filter_expression, node.noop, node.asvar, node.message_context)


class BlockTranslateNode(i18n.BlockTranslateNode):
    """Django's blocktranslate, its singular and plural msgids (and their variable names) built once."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.token_lists = {id(tokens): super(BlockTranslateNode, self).render_token_list(tokens)
                            for tokens in (self.singular, self.plural) if tokens is not None}
        # Django resolves the count with the block's own values pushed onto the context: a count that reads one of
        # them ({% blocktranslate count n=x|add:y with y=… %}) is left to its render.
        self.count_reads_own_values = bool(self.counter and _names_read(self.counter) & set(self.extra_context))

    def render_token_list(self, tokens):
        msgid, names = self.token_lists[id(tokens)]
        return msgid, list(names)  # render() extends the singular's list with the plural's

    def render(self, context, nested=False):
        """Django's render: the `with` values and the count are read from their own dict, not pushed onto the
        context and looked up through all of its levels again. A count that reads the block's own values, and the
        second attempt after a translation that does not fit its values, are left to Django's render."""
        if nested or self.count_reads_own_values:
            return super().render(context, nested)
        message_context = self.message_context.resolve(context) if self.message_context else None
        values = {name: value.resolve(context) for name, value in self.extra_context.items()}
        msgid, names = self.token_lists[id(self.singular)]
        if self.plural and self.countervar and self.counter:
            count = self.counter.resolve(context)
            if not isinstance(count, Decimal | float | int):
                raise TemplateSyntaxError(f"{self.countervar!r} argument to {self.tag_name!r} tag must be a number.")
            values[self.countervar] = count
            plural, plural_names = self.token_lists[id(self.plural)]
            result = (translation.npgettext(message_context, msgid, plural, count) if message_context
                      else translation.ngettext(msgid, plural, count))
            names = names + plural_names
        else:
            result = _translation((message_context or None, msgid))
        default = context.template.engine.string_if_invalid
        data = {}
        for name in names:  # Django's render_value, the block's own values first as its pushed level had them
            if name in values:
                value = values[name]
            elif name in context:
                value = context[name]
            else:
                value = default % name if "%s" in default else default
            data[name] = _rendered(value, context)
        try:
            result %= data
        except (KeyError, ValueError):  # a translation with a placeholder its block lacks: Django's fallback
            with translation.override(None):
                result = super().render(context, nested=True)
        if self.asvar:
            context[self.asvar] = SafeString(result)
            return ""
        return result


def _rendered(value, context) -> str:
    """render_value_in_context(value, context), with its common cases inline: most values of a block are figures a
    filter already made safe text (Django returns them as they are, after a datetime test, localize and
    conditional_escape), names (escaped as django.utils.html.escape does) and counts (an int: its digits, as
    Django's number formatting writes it when the site does not group thousands, in every language)."""
    value_type = type(value)
    if value_type is SafeString:
        return value
    if value_type is str:
        return SafeString(html.escape(value)) if context.autoescape else value
    if value_type is int and not settings.USE_THOUSAND_SEPARATOR:
        return str(value)
    return render_value_in_context(value, context)


def _names_read(expression) -> set[str]:
    """The context names a filter expression looks up: its variable's and its filters' variable arguments'."""
    variables = [expression.var, *(arg for _filter, args in expression.filters for is_lookup, arg in args if is_lookup)]
    return {variable.lookups[0] for variable in variables if isinstance(variable, Variable) and variable.lookups}


@register.tag("blocktranslate")
@register.tag("blocktrans")
def do_block_translate(parser, token):
    node = i18n.do_block_translate(parser, token)
    return BlockTranslateNode(node.extra_context, node.singular, node.plural, node.countervar, node.counter,
                              node.message_context, node.trimmed, node.asvar, node.tag_name)
