from django.conf.urls.i18n import i18n_patterns
from django.contrib import admin
from django.contrib.sitemaps import views as sitemap_views
from django.urls import include, path
from django.views.decorators.http import require_safe

from reports.sitemaps import SITEMAPS
from reports.views import cache_per_catalog_version, robots_txt

# Outside i18n_patterns: one robots.txt and one sitemap index for both languages (the sitemaps list /de/ and /en/).
urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("api.urls")),
    path("robots.txt", robots_txt, name="robots"),
    # GET and HEAD only, as every page (a POST, TRACE or OPTIONS is answered 405, not with the sitemap).
    path("sitemap.xml", require_safe(cache_per_catalog_version(sitemap_views.index)),
         {"sitemaps": SITEMAPS, "sitemap_url_name": "sitemap-section"}, name="sitemap-index"),
    path("sitemap-<slug:section>.xml", require_safe(cache_per_catalog_version(sitemap_views.sitemap)),
         {"sitemaps": SITEMAPS}, name="sitemap-section"),
]

urlpatterns += i18n_patterns(
    path("", include("reports.urls")),
    prefix_default_language=True,
)

handler400 = "reports.views.bad_request"
handler404 = "reports.views.page_not_found"
