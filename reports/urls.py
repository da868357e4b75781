from django.urls import path

from reports import views

app_name = "reports"

urlpatterns = [
    path("", views.home, name="home"),
    path("report/<slug:model_slug>/<slug:hardware_slug>/", views.report, name="report"),
]
