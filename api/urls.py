from django.urls import path

from api import views

app_name = "api"

urlpatterns = [
    path("estimate", views.estimate, name="estimate"),
    path("models", views.models, name="models"),
    path("hardware", views.hardware, name="hardware"),
    path("openapi.json", views.openapi, name="openapi"),
]
